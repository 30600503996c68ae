// The addresses module's one door: other code imports only this file.
export { registerAddress } from "./registry.js";
