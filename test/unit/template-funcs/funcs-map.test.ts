/**
 * The function maps: which names exist (sprig v3.2.3's, minus the unsupported ones, plus Sugarkube's), how the
 * unsupported ones fail, and the behaviour of the functions whose results are random.
 */
import { describe, expect, it } from 'vitest';
import {
  defaultFuncs,
  sprigFuncs,
  sugarkubeFuncs,
  SUPPORTED_FUNCTIONS,
  UNSUPPORTED_FUNCTIONS,
} from '../../../src/template/funcs/index.js';
import { renderTemplate, TemplateError } from '../../../src/template/index.js';

/** Every function the Go reference renderer knows (sprig v3.2.3's TxtFuncMap plus Sugarkube's six). */
const GO_FUNCTIONS = `abbrev abbrevboth add add1 add1f addf adler32sum ago all any append atoi b32dec b32enc b64dec
b64enc base bcrypt biggest buildCustomCert camelcase cat ceil chunk clean coalesce compact concat contains date
dateInZone dateModify date_in_zone date_modify decryptAES deepCopy deepEqual default derivePassword dict dig dir div
divf duration durationRound empty encryptAES env exists expandenv ext fail findFiles first float64 floor fromJson genCA
genCAWithKey genPrivateKey genSelfSignedCert genSelfSignedCertWithKey genSignedCert genSignedCertWithKey get
getHostByName has hasKey hasPrefix hasSuffix hello htmlDate htmlDateInZone htpasswd indent initial initials int int64
isAbs isSet join kebabcase keys kindIs kindOf last list listString lower mapPrintF max maxf merge mergeOverwrite min
minf mod mul mulf mustAppend mustChunk mustCompact mustDateModify mustDeepCopy mustFirst mustFromJson mustHas
mustInitial mustLast mustMerge mustMergeOverwrite mustPrepend mustPush mustRegexFind mustRegexFindAll mustRegexMatch
mustRegexReplaceAll mustRegexReplaceAllLiteral mustRegexSplit mustRest mustReverse mustSlice mustToDate mustToJson
mustToPrettyJson mustToRawJson mustUniq mustWithout must_date_modify nindent nospace now omit osBase osClean osDir osExt
osIsAbs pick pluck plural prepend push quote randAlpha randAlphaNum randAscii randBytes randInt randNumeric regexFind
regexFindAll regexMatch regexQuoteMeta regexReplaceAll regexReplaceAllLiteral regexSplit removeEmpty repeat replace rest
reverse round semver semverCompare seq set sha1sum sha256sum shuffle slice snakecase sortAlpha split splitList splitn
squote sub subf substr swapcase ternary title toDate toDecimal toJson toPrettyJson toRawJson toString toStrings trim
trimAll trimPrefix trimSuffix trimall trunc tuple typeIs typeIsLike typeOf uniq unixEpoch unset until untilStep
untitle upper urlJoin urlParse uuidv4 values without wrap wrapWith`.split(/\s+/);

const SUGARKUBE = ['exists', 'findFiles', 'isSet', 'listString', 'mapPrintF', 'removeEmpty'];

function render(text: string): string {
  return renderTemplate(text, null, { funcs: defaultFuncs() });
}

describe('function maps', () => {
  it('supports every Go function except the unsupported ones, and nothing else', () => {
    const unsupported = Object.keys(UNSUPPORTED_FUNCTIONS);
    expect(unsupported.every((n) => GO_FUNCTIONS.includes(n))).toBe(true);
    expect(SUPPORTED_FUNCTIONS).toEqual(GO_FUNCTIONS.filter((n) => !unsupported.includes(n)).sort());
    expect([...SUPPORTED_FUNCTIONS]).toEqual([...SUPPORTED_FUNCTIONS].sort());
    expect(SUPPORTED_FUNCTIONS.length).toBe(defaultFuncs().size);
  });

  it('splits the default map into sprig and Sugarkube functions', () => {
    expect([...sugarkubeFuncs().keys()].sort()).toEqual(SUGARKUBE);
    for (const name of SUGARKUBE) {
      expect(sprigFuncs().has(name)).toBe(false);
      expect(defaultFuncs().get(name)).toBe(sugarkubeFuncs().get(name));
    }
  });

  it('builds each map once', () => {
    expect(defaultFuncs()).toBe(defaultFuncs());
    expect(sprigFuncs()).toBe(sprigFuncs());
  });

  it('declares Go signatures the engine can check', () => {
    expect(defaultFuncs().get('upper')).toMatchObject({ params: ['string'] });
    expect(defaultFuncs().get('default')).toMatchObject({ params: ['interface {}'], variadic: 'interface {}' });
    expect(defaultFuncs().get('join')).toMatchObject({ params: ['string', 'interface {}'] });
    expect(defaultFuncs().get('hasKey')).toMatchObject({ params: ['map[string]interface {}', 'string'] });
    expect(defaultFuncs().get('findFiles')).toMatchObject({ params: ['string', '[]string'] });
    expect(defaultFuncs().get('add')).toMatchObject({ params: [], variadic: 'interface {}' });
  });

  it.each(Object.keys(UNSUPPORTED_FUNCTIONS))('%s is a parse error, even in an untaken branch', (name) => {
    const attempt = (): string => render(`{{ if false }}{{ ${name} }}{{ end }}`);
    expect(attempt).toThrow(TemplateError);
    expect(attempt).toThrow(`template: gotpl:1: function "${name}" not defined`);
  });
});

describe('random functions', () => {
  it('produce strings of the requested length and alphabet', () => {
    expect(render('{{ randAlphaNum 40 }}')).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(render('{{ randAlpha 30 }}')).toMatch(/^[A-Za-z]{30}$/);
    expect(render('{{ randNumeric 25 }}')).toMatch(/^[0-9]{25}$/);
    expect(render('{{ randAscii 50 }}')).toMatch(/^[ -~]{50}$/);
    expect(render('[{{ randAlpha 0 }}][{{ randAlpha -3 }}]')).toBe('[][]');
  });

  it('randBytes gives base64 of that many bytes', () => {
    expect(Buffer.from(render('{{ randBytes 24 }}'), 'base64')).toHaveLength(24);
    expect(() => render('{{ randBytes -1 }}')).toThrow('makeslice: len out of range');
  });

  it('uuidv4 gives version-4 UUIDs', () => {
    const a = render('{{ uuidv4 }}');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(render('{{ uuidv4 }}')).not.toBe(a);
  });

  it('shuffle keeps the characters', () => {
    const s = render('{{ shuffle "héllo wörld ✓" }}');
    expect([...s].sort()).toEqual([...'héllo wörld ✓'].sort());
  });

  it('randInt stays in [min, max)', () => {
    const values = new Set(Array.from({ length: 200 }, () => render('{{ randInt -2 3 }}')));
    for (const v of values) expect(['-2', '-1', '0', '1', '2']).toContain(v);
    expect(values.size).toBeGreaterThan(1);
  });
});
