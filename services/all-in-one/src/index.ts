export { allInOneModules } from './all-in-one.js';
