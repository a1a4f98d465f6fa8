/** `npm run config:table`: prints the README's configuration table from the area declarations. */
import { configurationTable } from "./Configuration.ts"

console.log(configurationTable())
