// The metrics module's one door: other code imports only this file.
export { refreshGauges } from "./gauges.js";
