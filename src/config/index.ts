/**
 * Configuration loading: YAML with locations, validation with diagnostics, normalisation into the shapes of
 * `./types.ts`, JSON Schemas. Other areas import from here.
 */
export { parseYamlValue, parseYamlTree, yamlToGoValue, nodeKindName } from './yaml.js';
export type {
  YamlNode,
  YamlMapNode,
  YamlSeqNode,
  YamlScalarNode,
  YamlMapEntry,
  ParseYamlValueOptions,
  GoValueOptions,
} from './yaml.js';
export {
  loadProjectConfig,
  parseProjectConfig,
  findProjectConfig,
  projectConfigSearchPath,
  defaultProjectConfig,
  PROJECT_CONFIG_FILE,
  DEFAULT_NUM_WORKERS,
} from './project-config.js';
export type { ProjectConfigSearch } from './project-config.js';
export { loadStack, defaultManifestId } from './stack.js';
export type { StackOverrides } from './stack.js';
export { loadManifest } from './manifest.js';
export { loadKappDescriptor } from './kapp-descriptor.js';
export { loadVarsFile } from './vars-file.js';
export { parseOutputFile } from './output-file.js';
export { parseSourceUri, defaultSourceId, sourceFqId, SourceUriError } from './source-uri.js';
export type { ParsedSourceUri } from './source-uri.js';
export { jsonSchemaFor, SCHEMA_KINDS } from './json-schema.js';
export type { SchemaKind } from './json-schema.js';
export { formatPath } from './validate.js';
