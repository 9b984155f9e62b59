/**
 * Configuration loading: YAML with locations, validation with diagnostics, normalisation into the shapes of
 * `./types.ts`, JSON Schemas. Other areas import from here.
 */
export { loadProjectConfig, defaultProjectConfig } from './project-config.js';
export { loadStack } from './stack.js';
export type { StackOverrides } from './stack.js';
export { loadManifest } from './manifest.js';
export { loadKappDescriptor } from './kapp-descriptor.js';
export { loadVarsFile } from './vars-file.js';
export { parseOutputFile } from './output-file.js';
export { parseSourceUri, sourceFqId, SourceUriError } from './source-uri.js';
