/**
 * The `yaml` package's writer, for the commands that print YAML. They load it with `import()` of this module, not
 * of the package: bundled, a CommonJS package loaded with `import()` would offer only its default export.
 */
export { stringify } from 'yaml';
