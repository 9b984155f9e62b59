#!/usr/bin/env node
// Writes test/fixtures/go-template/funcs-cases.json: the template-function cases beyond the shared corpus, in the
// conformance format (one case per line). After editing, regenerate the cases and the expected results:
//
//   node test/unit/template-funcs/build-cases.mjs
//   node test/unit/template-funcs/fixture-tree.mjs /tmp/kapps-funcs-fixtures
//   gotpl -fixtures /tmp/kapps-funcs-fixtures < test/fixtures/go-template/funcs-cases.json \
//     > test/fixtures/go-template/funcs-expected.json
//
// `gotpl` is the Go text/template + sprig v3.2.3 reference renderer (Go 1.19); funcs.test.ts compares kapps with it.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Data as JSON text, so 1.0 stays a float for the renderer (JSON.parse would turn it into an int).
const DATA = `{"name": "world", "empty": "", "space": " ", "zero": 0, "one": 1, "two": 2, "neg": -3, "big": 9007199254740993, "maxint": 9223372036854775807, "pi": 3.14, "half": 0.5, "fzero": 0.0, "fone": 1.0, "fneg": -2.5, "t": true, "f": false, "nil": null, "list": ["a", "b", "c"], "nums": [3, 1, 2], "dups": ["x", "y", "x", "z", "y"], "emptyList": [], "emptyMap": {}, "mixed": [1, "two", 3.5, true, null, {"k": "v"}, [1, 2]], "strs": ["", "a", "", "b"], "map": {"b": 2, "a": 1, "c": {"d": "deep"}}, "nested": {"l1": {"l2": {"l3": "bottom", "n": 7}}}, "unicode": "héllo wörld ✓", "multi": "line1\\nline2", "html": "<a href=\\"x\\">&</a>", "ver": "1.2.3", "root": "@FIXTURES@", "maps": [{"a": 1}, {"a": 2, "b": 3}, {"c": 4}], "bom": "\ufeffx\ufeff", "u64": 18446744073709551615}`;

const YAML = `top: 1
m:
  z: 1
  a:
    deep: x
  list: [1, 2.5, null, true]
  empty: ""
ints: {2: two, 1: one}
`;

const cases = [];
/** Add a case: id, template, and optionally { yaml: true, env: {...}, strict: true }. */
function c(id, template, opts = {}) {
  cases.push({ id, template, ...opts });
}

// ---- strings ----
c('trim.unicode-spaces', '[{{ trim "\\u00a0\\u0085 x \\u3000\\n" }}][{{ trim .bom }}]');
c('trim.trimAll-runes', '{{ trimAll "é-" "-éaé-" }}|{{ trimall "ab" "abcba" }}|{{ trimAll "" " x " }}');
c(
  'trim.prefix-suffix',
  '{{ trimSuffix "" "abc" }}|{{ trimPrefix "" "abc" }}|{{ trimSuffix "c" "abcc" }}|{{ trimPrefix "abcd" "abc" }}',
);
c('case.upper-lower', '{{ upper "ǆemal ßtraße µ ǅ ᾳ" }}|{{ lower "İSTANBUL ǅ ΣΑΣ K" }}');
c('case.title', '{{ title "hello_world x.y o\'neil 1st place\\ttab ünïcode ǆemal" }}');
c('case.title-more', '{{ title "a-b c+d (e) [f] {g} \\u00a0h" }}');
c('case.untitle', '{{ untitle "Hello World\\tFoo  Bar ÉCOLE" }}|{{ untitle "" }}');
c('case.swapcase', '{{ swapcase "Hello World" }}|{{ swapcase "hELLO wORLD" }}|{{ swapcase "ǅ ǆ ß 1a" }}');
for (const [i, s] of [
  '',
  '_',
  '__',
  'a',
  'A',
  'HTTPServer',
  'NoHTTPS',
  'GO_PATH',
  'GO PATH',
  'GO-PATH',
  'http2xx',
  'HTTP20xOK',
  'Duration2m3s',
  'Bld4Floor3rd',
  'some_words',
  '_complex__case_',
  'some words',
  'FirstName',
  'a.b.c',
  'x-y_z w',
  'ÉcoleNormale',
  '日本語Text',
  'foo--bar',
  '--foo',
  'foo__',
  'A1B2',
  '123',
  'abc123def',
  'aBC',
  'ABc',
  'a1',
  'AB1cd',
  'hello, World!',
].entries()) {
  c(
    `case.xstrings-${i}`,
    `[{{ snakecase ${JSON.stringify(s)} }}][{{ kebabcase ${JSON.stringify(s)} }}][{{ camelcase ${JSON.stringify(s)} }}]`,
  );
}
c(
  'substr.basic',
  '{{ substr 1 3 "abcdef" }}|{{ substr -1 2 "abcdef" }}|{{ substr 2 -1 "abcdef" }}|{{ substr 2 10 "abcdef" }}|{{ substr 0 0 "abc" }}',
);
c('substr.bytes', '{{ substr 1 3 "héllo" }}|{{ substr 0 2 "é" }}|{{ substr 0 1 "é" }}|{{ len (substr 0 1 "é") }}');
c('substr.panic-start-past-end', '{{ substr 5 10 "abc" }}');
c('substr.panic-start-after-end', '{{ substr 3 2 "abcdef" }}');
c('substr.panic-end-past-len', '{{ substr -1 10 "abc" }}');
c('substr.panic-negative-end', '{{ substr -1 -1 "abc" }}');
c('substr.type-error', '{{ substr "1" 2 "abc" }}');
c('repeat.basic', '[{{ repeat 3 "ab" }}][{{ repeat 0 "x" }}][{{ repeat 2 "" }}][{{ "é" | repeat 2 }}]');
c('repeat.negative', '{{ repeat -1 "x" }}');
c('repeat.int64-arg', '{{ repeat (add 1 1) "x" }}');
c('nospace.basic', '{{ nospace "a b\\tc\\nd\\u00a0e" }}|{{ nospace "no-space" }}|{{ nospace "héllo" }}');
c('nospace.latin1', '{{ nospace "é é" }}|{{ nospace "à b" }}');
c(
  'initials.basic',
  '{{ initials "foo bar baz" }}|{{ initials "  leading  spaces" }}|{{ initials "" }}|{{ initials "a\\tb\\nc" }}',
);
c('initials.unicode', '{{ initials "élan vital" }}|{{ initials "ünd" }}');
c('shuffle.shape', '{{ len (shuffle "abcdef") }}|{{ shuffle "" }}|{{ shuffle "a" }}|{{ shuffle "aaa" }}');
c(
  'wrap.basic',
  '{{ wrap 5 "a b c d e f g" }}|{{ wrap 3 "abcdefgh ij" }}|{{ wrap 0 "a b" }}|{{ wrap 10 "  leading spaces here  " }}',
);
c('wrap.long-words', '{{ wrap 4 "http://example.com/long ok" }}|{{ wrap 20 "short" }}|{{ wrap 5 "" }}');
c(
  'wrap.with',
  '{{ wrapWith 5 "<br>" "abcdefghij klm" }}|{{ wrapWith 3 "" "abcdefg" }}|{{ wrapWith 4 "|" "ab cd ef gh" }}',
);
c('wrap.with-bytes', '{{ wrapWith 3 "\\n" "héllo" }}');
c(
  'contains.edge',
  '{{ contains "" "abc" }} {{ hasPrefix "" "" }} {{ hasSuffix "c" "abc" }} {{ hasSuffix "abcd" "bcd" }} {{ contains "ö" .unicode }}',
);
c('quote.args', '{{ quote "a" 1 .nil 2.5 true }}|{{ quote }}|{{ quote .map }}|{{ quote "tab\\there" "é\\u0001" }}');
c('quote.unicode', '{{ quote "héllo ✓ \\u200b \\U0001F600" }}');
c('squote.args', '{{ squote "a" 1 .nil 2.5 .list }}|{{ squote "it\'s" }}|{{ squote }}');
c('cat.args', '{{ cat "a" .nil 1 2.5 .map }}|{{ cat }}|{{ cat .nil }}|{{ cat "" "" }}');
c('indent.edge', '[{{ indent 0 "a\\nb" }}][{{ indent 2 "" }}][{{ indent 1 "a\\r\\nb\\n" }}][{{ nindent 0 "x" }}]');
c('indent.negative', '{{ indent -1 "x" }}');
c(
  'replace.edge',
  '{{ replace "" "-" "abc" }}|{{ replace "" "-" "" }}|{{ replace "é" "e" "héllé" }}|{{ replace "a" "a" "aaa" }}|{{ replace "aa" "b" "aaaaa" }}',
);
c('replace.empty-unicode', '{{ replace "" "." "é✓" }}');
c('plural.edge', '{{ plural "one" "many" 0 }} {{ plural "one" "many" -1 }} {{ plural "one" "many" 1 }}');
c(
  'abbrev.edge',
  '{{ abbrev 3 "hello world" }}|{{ abbrev 4 "hello world" }}|{{ abbrev 11 "hello world" }}|{{ abbrev 10 "hello world" }}|{{ abbrev 5 "" }}',
);
c('abbrev.bytes', '{{ abbrev 5 "héllo wörld" }}|{{ abbrev 6 "héllo wörld" }}');
c(
  'abbrevboth.cases',
  '{{ abbrevboth 0 4 "abcdefghijklmno" }}|{{ abbrevboth 5 10 "abcdefghijklmno" }}|{{ abbrevboth 10 10 "abcdefghijklmno" }}|{{ abbrevboth 4 10 "abcdefghijklmno" }}|{{ abbrevboth 12 10 "abcdefghijklmno" }}|{{ abbrevboth 5 6 "abcdefghijklmno" }}|{{ abbrevboth 1 3 "abc" }}|{{ abbrevboth 8 10 "abcdefghijklmno" }}',
);
c(
  'trunc.edge',
  '{{ trunc 0 "abc" }}|{{ trunc -3 "abc" }}|{{ trunc -5 "abc" }}|{{ trunc 2 "héllo" }}|{{ trunc -2 "héllo" }}|{{ trunc -4 "héllo" }}',
);
c(
  'split.edge',
  '{{ split "," "" }}|{{ split "" "abc" }}|{{ split "," "a,b" }}|{{ (split "," "a,b")._1 }}|{{ printf "%T" (split "," "a") }}',
);
c(
  'splitList.edge',
  '{{ splitList "" "héllo" }}|{{ len (splitList "" "") }}|{{ splitList "," "," }}|{{ printf "%T" (splitList "," "a") }}',
);
c(
  'splitn.edge',
  '{{ splitn "," 0 "a,b,c" }}|{{ splitn "," 1 "a,b,c" }}|{{ splitn "," 2 "a,b,c" }}|{{ splitn "," -1 "a,b,c" }}|{{ splitn "" 2 "abc" }}|{{ splitn "," 10 "a,b" }}',
);
c(
  'toString.types',
  '{{ toString 1 }}|{{ toString 2.5 }}|{{ toString .nil }}|{{ toString .list }}|{{ toString .map }}|{{ toString true }}|{{ toString (semver "1.2.3") }}|{{ toString .fone }}',
);
c(
  'toStrings.types',
  '{{ toStrings .nil }}|{{ toStrings .mixed }}|{{ toStrings "a" }}|{{ toStrings 5 }}|{{ toStrings (until 3) }}|{{ toStrings .map }}|{{ printf "%T" (toStrings .list) }}',
);
c(
  'join.types',
  '{{ join "," .mixed }}|{{ join "-" "abc" }}|{{ join "-" 5 }}|{{ join "-" (until 3) }}|{{ join "," .map }}|{{ join "" .emptyList }}',
);
c(
  'sortAlpha.types',
  '{{ sortAlpha "b" }}|{{ sortAlpha 5 }}|{{ sortAlpha .nil }}|{{ sortAlpha .mixed }}|{{ sortAlpha (list "b" "B" "a" "é" "e" "10" "9") }}|{{ printf "%T" (sortAlpha .list) }}',
);
c(
  'sortAlpha.in-place',
  '{{ $l := splitList "," "b,a" }}{{ $s := sortAlpha $l }}{{ $l }} {{ $s }}|{{ $m := list "b" "a" }}{{ $t := sortAlpha $m }}{{ $m }}|{{ $u := toStrings (splitList "," "d,c") }}{{ $_ := sortAlpha $u }}{{ $u }}',
);
c('hello', '{{ hello }}');

// ---- conversions ----
c(
  'conv.atoi',
  '{{ atoi "42" }}|{{ atoi " 1" }}|{{ atoi "1_000" }}|{{ atoi "0x1F" }}|{{ atoi "-7" }}|{{ atoi "+5" }}|{{ atoi "-" }}|{{ atoi "" }}|{{ atoi "99999999999999999999" }}|{{ atoi "-99999999999999999999" }}|{{ atoi "3.5" }}',
);
c(
  'conv.int',
  '{{ int "42" }}|{{ int "0x1F" }}|{{ int "010" }}|{{ int "0o17" }}|{{ int "0b101" }}|{{ int "1_000" }}|{{ int "3.000" }}|{{ int "3.10" }}|{{ int " 1" }}|{{ int "99999999999999999999" }}|{{ int true }}|{{ int .nil }}|{{ int .list }}|{{ int 2.9 }}|{{ int -2.9 }}|{{ int .big }}',
);
c(
  'conv.int64',
  '{{ int64 "42" }}|{{ int64 1e20 }}|{{ int64 -1e20 }}|{{ int64 "9223372036854775807" }}|{{ int64 "9223372036854775808" }}|{{ int64 "-9223372036854775808" }}|{{ int64 .maxint }}',
);
c(
  'conv.float64',
  '{{ float64 "1e3" }}|{{ float64 "inf" }}|{{ float64 "-Infinity" }}|{{ float64 "nan" }}|{{ float64 "1_000.5" }}|{{ float64 "0x1p-2" }}|{{ float64 "1e400" }}|{{ float64 " 1" }}|{{ float64 true }}|{{ float64 .nil }}|{{ float64 .big }}|{{ float64 ".5" }}|{{ float64 "5." }}',
);
c(
  'conv.toDecimal',
  '{{ toDecimal "0777" }}|{{ toDecimal "8" }}|{{ toDecimal "-17" }}|{{ toDecimal 17 }}|{{ toDecimal "0o17" }}|{{ toDecimal "1_0" }}|{{ toDecimal 1.5 }}|{{ toDecimal .nil }}|{{ toDecimal "777777777777777777777777" }}',
);
c('conv.types', '{{ printf "%T %T %T %T %T" (atoi "1") (int "1") (float64 1) (toDecimal "7") (int64 1) }}');

// ---- math ----
c(
  'math.add-types',
  '{{ add "1" "2" }}|{{ add 1.9 1.9 }}|{{ add true true }}|{{ add .nil 1 }}|{{ add }}|{{ add "x" 1 }}|{{ add .list 1 }}|{{ add "0x10" 1 }}',
);
c('math.overflow', '{{ add .maxint 1 }}|{{ mul .maxint 2 }}|{{ sub -9223372036854775808 1 }}|{{ add1 .maxint }}');
c(
  'math.sub-mul-div-mod',
  '{{ sub 1 3 }}|{{ mul 2 3 4 }}|{{ mul 5 }}|{{ div 7 2 }}|{{ div -7 2 }}|{{ mod 7 3 }}|{{ mod -7 3 }}|{{ mod 7 -3 }}|{{ div -9223372036854775808 -1 }}',
);
c('math.mod-zero', '{{ mod 1 0 }}');
c('math.div-zero-string', '{{ div 1 "0" }}');
c('math.max-min', '{{ max 1 }}|{{ max "5" 2.9 3 }}|{{ min -1 "x" }}|{{ biggest 1 2 }}|{{ max .nil }}|{{ min 3 1 2 }}');
c(
  'math.maxf-minf',
  '{{ maxf 1 2.5 "3" }}|{{ minf 1 2.5 -0.5 }}|{{ maxf 1 (float64 "nan") }}|{{ minf .nil }}|{{ maxf 0 -0.0 }}',
);
c(
  'math.floor-ceil',
  '{{ floor "1.7" }}|{{ ceil -1.2 }}|{{ floor 3 }}|{{ ceil .nil }}|{{ floor -0.5 }}|{{ printf "%T" (floor 1) }}',
);
c(
  'math.round',
  '{{ round 2.5 0 }}|{{ round -2.5 0 }}|{{ round 1.005 2 }}|{{ round 1234.5678 -2 }}|{{ round 3.14159 3 }}|{{ round 2.4 0 0.4 }}|{{ round "2.5" 0 }}|{{ round 0.000015 5 }}|{{ round 1.23456789 7 }}|{{ round 5 1 }}',
);
c(
  'math.round-more',
  '{{ round 0.285 2 }}|{{ round 1.15 1 }}|{{ round -0.5 0 }}|{{ round 123.456 -1 }}|{{ round 0.0001234 6 }}|{{ round 1e20 2 }}',
);
c(
  'math.floatops',
  '{{ addf 0.1 0.2 }}|{{ subf 0.3 0.1 }}|{{ mulf 0.1 3 }}|{{ divf 1 3 }}|{{ divf 2 3 }}|{{ divf -2 3 }}|{{ add1f 0.1 }}|{{ addf }}|{{ addf "1.5" "x" }}|{{ subf 1 }}|{{ mulf 1.1 1.1 }}|{{ divf 10 4 2 }}',
);
c(
  'math.floatops-big',
  '{{ addf 1e20 1 }}|{{ mulf 1e200 1e200 }}|{{ divf 1 1e-300 }}|{{ addf 123456789.123456789 0.000000001 }}|{{ divf 1e-20 3 }}',
);
c('math.divf-zero', '{{ divf 1 0 }}');
c('math.addf-nan', '{{ addf (float64 "nan") 1 }}');
c(
  'math.until',
  '{{ until 0 }}|{{ until -3 }}|{{ untilStep 0 10 4 }}|{{ untilStep 10 0 -3 }}|{{ untilStep 0 10 0 }}|{{ untilStep 10 0 3 }}|{{ printf "%T" (until 2) }}',
);
c(
  'math.seq',
  '[{{ seq }}][{{ seq 0 }}][{{ seq 5 }}][{{ seq -3 }}][{{ seq 2 5 }}][{{ seq 5 2 }}][{{ seq 1 2 10 }}][{{ seq 10 -2 1 }}][{{ seq 1 -1 5 }}][{{ seq 1 2 3 4 }}][{{ seq 5 5 }}]',
);
c('math.randInt', '{{ $r := randInt 5 7 }}{{ and (ge $r 5) (lt $r 7) }}|{{ randInt 3 4 }}');
c('math.randInt-empty', '{{ randInt 1 1 }}');

c(
  'math.uint64-data',
  '{{ add .u64 0 }}|{{ int .u64 }}|{{ float64 .u64 }}|{{ max .u64 1 }}|{{ toJson .u64 }}|{{ toString .u64 }}',
);

// ---- lists ----
c(
  'list.first-last-types',
  '{{ first (splitList "," "x,y") }}|{{ last (until 4) }}|{{ first (list .nil 1) }}|{{ last .emptyList }}',
);
c('list.first-map', '{{ first .map }}');
c('list.mustFirst-string', '{{ mustFirst "abc" }}');
c('list.mustLast-nil', '{{ mustLast .nil }}');
c(
  'list.rest-initial',
  '{{ rest .emptyList }}|{{ initial .emptyList }}|{{ toJson (rest .emptyList) }}|{{ toJson (initial (list 1)) }}|{{ rest (until 3) }}|{{ initial "" | len }}',
);
c('list.rest-bool', '{{ rest true }}');
c('list.mustInitial-float', '{{ mustInitial 1.5 }}');
c(
  'list.append',
  '{{ append .list "d" }}|{{ push .emptyList 1 }}|{{ append (until 2) "x" }}|{{ printf "%T" (append (splitList "," "a") "b") }}',
);
c('list.append-nil', '{{ append .nil 1 }}');
c('list.append-string', '{{ append "abc" "d" }}');
c('list.mustAppend-map', '{{ mustAppend .map 1 }}');
c('list.mustPush-string', '{{ mustPush "abc" 1 }}');
c('list.prepend', '{{ prepend .emptyList 1 }}|{{ mustPrepend (until 2) 9 }}');
c('list.prepend-int', '{{ prepend 5 1 }}');
c(
  'list.chunk',
  '{{ chunk 2 (list 1 2 3 4 5) }}|{{ chunk 3 .emptyList }}|{{ chunk 5 .list }}|{{ chunk 1 .list }}|{{ printf "%T" (chunk 2 .list) }}|{{ mustChunk 2 (until 4) }}',
);
c('list.chunk-zero', '{{ chunk 0 .list }}');
c('list.chunk-negative', '{{ chunk -1 .list }}');
c('list.chunk-negative-empty', '{{ chunk -1 .emptyList }}');
c('list.mustChunk-string', '{{ mustChunk 2 "abc" }}');
c(
  'list.uniq-deep',
  '{{ uniq (list 1 1.0 "1" .nil .nil (list 1) (list 1) .map .map) }}|{{ uniq (until 0) }}|{{ mustUniq .dups }}',
);
c('list.uniq-string', '{{ uniq "abc" }}');
c(
  'list.without',
  '{{ without (list 1 2 3 2 1) 1 2 }}|{{ without .list }}|{{ without (until 4) 1 }}|{{ mustWithout .mixed .nil 1 }}',
);
c('list.without-nil', '{{ without .nil 1 }}');
c(
  'list.has',
  '{{ has 1 (list 1.0 2) }}|{{ has 1 (until 3) }}|{{ has .nil .mixed }}|{{ has (list 1 2) .mixed }}|{{ mustHas "z" .list }}',
);
c('list.has-string', '{{ has "a" "abc" }}');
c('list.mustHas-map', '{{ mustHas "a" .map }}');
c(
  'list.compact',
  '{{ compact .mixed }}|{{ compact (list 0 "" .nil false .emptyList .emptyMap 0.0 "x") }}|{{ mustCompact .strs }}',
);
c('list.compact-int', '{{ compact 1 }}');
c(
  'list.reverse',
  '{{ reverse .emptyList }}|{{ reverse (until 3) }}|{{ mustReverse .list }}|{{ printf "%T" (reverse (splitList "," "a")) }}',
);
c('list.mustReverse-string', '{{ mustReverse "abc" }}');
c(
  'list.slice',
  '{{ slice .list 0 }}|{{ slice .list 3 }}|{{ slice .list "1" "2" }}|{{ slice .list 1.9 2 }}|{{ slice (splitList "," "a,b,c") 1 }}|{{ printf "%T" (slice (splitList "," "a,b") 1) }}|[{{ slice .emptyList 0 }}]|{{ mustSlice .nums 1 2 }}',
);
c('list.slice-start-after-end', '{{ slice .list 2 1 }}');
c('list.slice-negative', '{{ slice .list -1 }}');
c('list.mustSlice-out', '{{ mustSlice .list 0 9 }}');
c('list.mustSlice-string', '{{ mustSlice "abc" 1 }}');
c(
  'list.concat',
  '{{ concat .list .nums }}|{{ concat }}|{{ concat .emptyList }}|{{ toJson (concat) }}|{{ concat (until 2) (splitList "," "a") }}|{{ printf "%T" (concat .list) }}',
);
c('list.concat-nil', '{{ concat .list .nil }}');
c('list.concat-string', '{{ concat .list "x" }}');
c('list.tuple', '{{ tuple 1 "a" .nil }}|{{ printf "%T" (tuple) }}');
c(
  'list.typed-results',
  '{{ printf "%T" (slice (until 5) 1 3) }}|{{ slice (until 5) 1 3 }}|{{ printf "%T" (uniq (splitList "," "a,a")) }}|{{ index (splitList "," "a,b") 1 }}|{{ range (until 3) }}{{ . }}{{ end }}|{{ len (chunk 2 (until 5)) }}',
);
c('list.first-split-map', '{{ first (split "," "a") }}');
c('dict.hasKey-split-map', '{{ hasKey (split "," "a") "_0" }}');
c('list.list-is-copy', '{{ $l := list 1 2 }}{{ $m := append $l 3 }}{{ $l }} {{ $m }}');

// ---- dicts ----
c('dict.keys-types', '{{ dict 1 "a" 2.5 "b" .nil "c" true "d" }}|{{ dict "a" }}|{{ dict }}|{{ dict "a" 1 "a" 2 }}');
c('dict.get', '[{{ get .map "a" }}][{{ get .map "zz" }}][{{ get .emptyMap "x" }}][{{ get .nope "x" }}]');
c('dict.get-list', '{{ get .list "a" }}');
c('dict.set-unset', '{{ $d := dict "a" 1 }}{{ set $d "b" .nil }}|{{ unset $d "a" }}|{{ unset $d "zz" }}|{{ $d }}');
c('dict.set-nil-map', '{{ set .nope "a" 1 }}');
c('dict.unset-nil-map', '{{ unset .nope "a" }}');
c('dict.hasKey-nil', '{{ hasKey .nope "a" }}|{{ hasKey .emptyMap "" }}');
c(
  'dict.pluck',
  '{{ pluck "a" (index .maps 0) (index .maps 1) (index .maps 2) }}|{{ pluck "zz" .map }}|{{ pluck "a" }}',
);
c(
  'dict.keys-values',
  '{{ keys .emptyMap }}|{{ keys }}|{{ values (dict "x" 1) }}|{{ values .emptyMap }}|{{ printf "%T %T" (keys .map) (values .map) }}|{{ keys .map .map | sortAlpha }}',
);
c(
  'dict.pick-omit',
  '{{ pick .map }}|{{ pick .map "zz" "a" }}|{{ omit .map }}|{{ omit .map "a" "b" "c" "zz" }}|{{ pick .nope "a" }}|{{ omit .nope "a" }}',
);
c('dict.pick-int-key', '{{ pick .map 1 }}');
c('dict.merge-nested', '{{ merge (dict "a" (dict "x" 1 "y" 2) "b" 1) (dict "a" (dict "y" 3 "z" 4) "b" 2 "c" 3) }}');
c(
  'dict.mergeOverwrite-nested',
  '{{ mergeOverwrite (dict "a" (dict "x" 1 "y" 2) "b" 1) (dict "a" (dict "y" 3 "z" 4) "b" 2 "c" 3) }}',
);
c(
  'dict.merge-empties',
  '{{ merge (dict "a" "" "b" 0 "c" .nil "d" false "e" .emptyList "f" "keep") (dict "a" "A" "b" 2 "c" "C" "d" true "e" (list 1) "f" "new" "g" .nil) }}',
);
c(
  'dict.mergeOverwrite-empties',
  '{{ mergeOverwrite (dict "a" "x" "b" 1 "c" "keep") (dict "a" "" "b" 0 "c" .nil "d" .nil) }}',
);
c(
  'dict.merge-map-vs-scalar',
  '{{ merge (dict "a" "x") (dict "a" (dict "k" 1)) }}|{{ mergeOverwrite (dict "a" "x") (dict "a" (dict "k" 1)) }}|{{ mergeOverwrite (dict "a" (dict "k" 1)) (dict "a" "x") }}|{{ mergeOverwrite (dict "a" "") (dict "a" (dict "k" 1)) }}',
);
c(
  'dict.merge-lists',
  '{{ merge (dict "a" (list 1)) (dict "a" (list 2 3)) }}|{{ mergeOverwrite (dict "a" (list 1)) (dict "a" (list 2 3)) }}|{{ merge (dict "a" .emptyList) (dict "a" (list 2)) }}|{{ mergeOverwrite (dict "a" (list 1)) (dict "a" .emptyList) }}|{{ merge (dict "a" "s") (dict "a" (list 1)) }}',
);
c(
  'dict.merge-mutates',
  '{{ $d := dict "a" 1 }}{{ $_ := merge $d (dict "b" 2) }}{{ $d }}|{{ $e := dict "a" (dict "x" 1) }}{{ $_ := merge (dict) $e }}{{ $_ }}',
);
c(
  'dict.merge-nil',
  '{{ merge .nope (dict "a" 1) }}|{{ merge (dict "a" 1) .nope }}|{{ merge .nope }}|{{ mustMerge (dict "a" 1) (dict "b" 2) }}|{{ mustMergeOverwrite (dict "a" 1) (dict "a" 2) }}',
);
c(
  'dict.merge-three',
  '{{ merge (dict "a" 1) (dict "a" 2 "b" 2) (dict "b" 3 "c" 3) }}|{{ mergeOverwrite (dict "a" 1) (dict "a" 2 "b" 2) (dict "b" 3 "c" 3) }}',
);
c('dict.merge-yaml-nested', '{{ $d := dict "m" .m }}{{ merge $d (dict "m" (dict "new" 1)) }}', { yaml: true });
c('dict.merge-yaml-into-string-map', '{{ merge (dict "m" (dict "z" 5)) (dict "m" .m) }}', { yaml: true });
c(
  'dict.deepCopy',
  '{{ deepCopy .nil }}|{{ deepCopy .mixed }}|{{ printf "%T" (deepCopy (splitList "," "a")) }}|{{ $c := deepCopy .map }}{{ $_ := set $c "a" 9 }}{{ .map.a }} {{ $c.a }}|{{ mustDeepCopy 5 }}',
);
c('dict.deepCopy-yaml', '{{ deepCopy .m }}|{{ printf "%T" (deepCopy .m) }}', { yaml: true });
c(
  'dict.dig',
  '{{ dig "l1" "l2" "n" 0 .nested }}|{{ dig "l1" "dflt" .nested }}|{{ dig "zz" "yy" "dflt" .nested }}|{{ dig "a" 5 .map }}',
);
c('dict.dig-two-args', '{{ dig "a" .map }}');
c('dict.dig-not-map', '{{ dig "a" "x" .list }}');
c('dict.dig-int-key', '{{ dig 1 "x" .map }}');
c('dict.dig-into-scalar', '{{ dig "a" "x" "d" .map }}');
c('dict.dig-yaml', '{{ dig "a" "x" .m }}', { yaml: true });
c('dict.hasKey-yaml', '{{ hasKey .m "z" }}', { yaml: true });

// ---- defaults, flow, reflection ----
c(
  'default.more',
  '{{ default "d" 0 }}|{{ default "d" .emptyMap }}|{{ default "d" " " }}|{{ default "d" (semver "0.0.0") }}|{{ default "d" .nil .name }}|{{ default .nil .nil }}|{{ default 1 "x" "y" }}',
);
c('default.yaml-empty', '{{ default "d" .m.empty }}|{{ default "d" .m.nope }}', { yaml: true });
c(
  'empty.more',
  '{{ empty .nil }}|{{ empty 0.0 }}|{{ empty (semver "1.0.0") }}|{{ empty (list .nil) }}|{{ empty .m }}',
  { yaml: true },
);
c('coalesce.more', '{{ coalesce 0 "" .nil false "x" }}|{{ coalesce .emptyMap .map }}|{{ coalesce .nil }}');
c(
  'all-any',
  '{{ all }}|{{ any }}|{{ all 1 "a" true }}|{{ all 1 "" }}|{{ any 0 "" .nil }}|{{ any 0 "x" }}|{{ all .list .map }}|{{ any .emptyList .emptyMap }}',
);
c('ternary.types', '{{ ternary 1 2 false }}|{{ ternary .list .map true }}|{{ ternary "a" "b" .t }}');
c('ternary.nil-cond', '{{ ternary "a" "b" .nil }}');
c('ternary.string-cond', '{{ ternary "a" "b" "true" }}');
c('fail.empty', '{{ fail "" }}');
c('fail.int', '{{ fail 1 }}');
c(
  'typeOf.results',
  '{{ typeOf (split "," "a") }}|{{ typeOf (until 2) }}|{{ typeOf (semver "1.2.3") }}|{{ typeOf (semver "1.2.3").IncMajor }}|{{ typeOf (chunk 1 .list) }}|{{ typeOf (list) }}|{{ typeOf (dict) }}|{{ typeOf .big }}|{{ typeOf true }}',
);
c('typeOf.yaml', '{{ typeOf .m }}|{{ typeOf .ints }}|{{ kindOf .m }}|{{ typeOf .top }}', { yaml: true });
c(
  'typeIs',
  '{{ typeIs "string" .name }}|{{ typeIs "int" 1 }}|{{ typeIs "float64" 1 }}|{{ typeIs "<nil>" .nil }}|{{ typeIs "[]interface {}" .list }}|{{ typeIs "[]string" (splitList "," "a") }}',
);
c(
  'typeIsLike',
  '{{ typeIsLike "semver.Version" (semver "1.0.0") }}|{{ typeIsLike "*semver.Version" (semver "1.0.0") }}|{{ typeIsLike "string" "x" }}|{{ typeIsLike "int" "x" }}',
);
c(
  'kindOf.more',
  '{{ kindOf .nil }}|{{ kindOf (semver "1.0.0") }}|{{ kindOf (semver "1.0.0").IncMajor }}|{{ kindOf (splitList "," "a") }}|{{ kindOf (split "," "a") }}|{{ kindIs "invalid" .nil }}|{{ kindIs "ptr" (semver "1.0.0") }}',
);
c(
  'deepEqual.more',
  '{{ deepEqual .nil .nil }}|{{ deepEqual 1 1 }}|{{ deepEqual 1 1.0 }}|{{ deepEqual .map (dict "a" 1 "b" 2 "c" (dict "d" "deep")) }}|{{ deepEqual (list "a") (splitList "," "a") }}|{{ deepEqual (splitList "," "a,b") (splitList "," "a,b") }}|{{ deepEqual (float64 "nan") (float64 "nan") }}|{{ deepEqual .emptyMap (dict) }}|{{ deepEqual (semver "1.0.0") (semver "1.0.0") }}',
);

// ---- regular expressions ----
c(
  'regex.flags',
  '{{ regexMatch "(?i)HELLO" "hello" }}|{{ regexMatch "a.b" "a\\nb" }}|{{ regexMatch "(?s)a.b" "a\\nb" }}|{{ regexMatch "a.b" "a\\rb" }}|{{ regexFindAll "(?m)^\\\\w+$" "ab\\ncd\\r\\nef" -1 }}|{{ regexFindAll "^\\\\w+$" "ab\\ncd" -1 }}',
);
c(
  'regex.flags-scoped',
  '{{ regexFindAll "a(?i:b)c" "abc aBc abC ABC" -1 }}|{{ regexFindAll "a(?i)bc" "abc aBC ABC" -1 }}|{{ regexFindAll "(a(?i)b)c" "abc aBc aBC" -1 }}|{{ regexFindAll "(?i)a(?-i)b" "ab Ab aB" -1 }}',
);
c(
  'regex.ungreedy',
  '{{ regexFind "(?U)a+" "aaa" }}|{{ regexFind "(?U)a+?" "aaa" }}|{{ regexFind "a+?" "aaa" }}|{{ regexFind "a{2,}?" "aaaa" }}|{{ regexFind "<.*>" "<a><b>" }}|{{ regexFind "<.*?>" "<a><b>" }}',
);
c(
  'regex.dollar',
  '{{ regexMatch "a$" "a\\n" }}|{{ regexMatch "(?m)a$" "a\\n" }}|{{ regexMatch "a\\\\z" "a" }}|{{ regexMatch "\\\\Aa" "ba" }}|{{ regexFindAll "(?m)$" "a\\nb" -1 | len }}',
);
c(
  'regex.fold-unicode',
  '{{ regexMatch "(?i)k" "\\u212a" }}|{{ regexMatch "(?i)s" "\\u017f" }}|{{ regexMatch "(?i)ß" "ẞ" }}|{{ regexMatch "(?i)[a-z]+" "ÀB" }}|{{ regexMatch "(?i)é" "É" }}|{{ regexMatch "(?i)\\\\w" "\\u017f" }}|{{ regexMatch "\\\\w" "\\u017f" }}',
);
c(
  'regex.classes',
  '{{ regexFindAll "[[:alpha:]]+" "ab1cd" -1 }}|{{ regexFindAll "[[:^alpha:]]+" "ab1cd" -1 }}|{{ regexFindAll "[[:digit:][:upper:]]" "aB1" -1 }}|{{ regexFindAll "\\\\pL+" "héllo wörld" -1 }}|{{ regexFindAll "\\\\p{Greek}+" "abc αβγ" -1 }}|{{ regexFindAll "\\\\PL+" "ab12cd" -1 }}|{{ regexFindAll "\\\\p{^Greek}+" "αβabc" -1 }}|{{ regexFindAll "[\\\\p{Lu}\\\\d]+" "aBC1d" -1 }}',
);
c(
  'regex.perl-classes',
  '{{ regexFindAll "\\\\s+" "a \\u00a0b\\tc\\u000bd" -1 | len }}|{{ regexFindAll "\\\\d+" "1٣2" -1 }}|{{ regexFindAll "\\\\w+" "héllo" -1 }}|{{ regexFindAll "[^\\\\d\\\\s]+" "a1 b2" -1 }}|{{ regexFindAll "\\\\S+" "a\\u00a0b c" -1 }}',
);
c(
  'regex.escapes',
  '{{ regexFind "\\\\x41\\\\x{42}\\\\101" "xABA" }}|{{ regexFind "\\\\Q.*+\\\\E+" "a.*++" }}|{{ regexFind "\\\\Q.*" "x.*" }}|{{ regexFind "a\\\\.b" "axb a.b" }}|{{ regexFind "\\\\_" "_" }}|{{ regexFind "[\\\\]]" "]" }}|{{ regexFind "[]a]+" "a]a" }}|{{ regexFind "[^]a]+" "a]bc" }}|{{ regexFind "\\\\012" "a\\nb" | len }}',
);
c(
  'regex.boundary',
  '{{ regexFindAll "\\\\bfoo\\\\b" "foo foobar barfoo foo" -1 }}|{{ regexFindAll "\\\\Boo\\\\B" "foo boom" -1 }}|{{ regexFindAll "\\\\bé" "é xé" -1 }}',
);
c(
  'regex.repeat',
  '{{ regexFind "a{2}" "aaa" }}|{{ regexFind "a{2,3}" "aaaa" }}|{{ regexFind "a{,2}" "a{,2}" }}|{{ regexFind "a{x}" "a{x}" }}|{{ regexFind "x{0}y" "xy" }}|{{ regexFind "(ab){2}" "ababab" }}|{{ regexFind "a{01}" "a{01}" }}|{{ regexFind "^*a" "a" }}|{{ regexFind "a*(?i)*" "aaa" }}',
);
c(
  'regex.named-groups',
  '{{ regexReplaceAll "(?P<first>\\\\w+) (?P<last>\\\\w+)" "John Smith" "${last}, ${first}" }}|{{ regexReplaceAll "(\\\\w)(\\\\w)" "ab" "$2$1" }}|{{ regexReplaceAll "(a)" "a" "$1x" }}|{{ regexReplaceAll "(a)" "a" "${1}x" }}|{{ regexReplaceAll "(a)" "a" "$$1" }}|{{ regexReplaceAll "(a)" "a" "$" }}|{{ regexReplaceAll "(a)" "a" "${1" }}|{{ regexReplaceAll "(a)" "a" "$9" }}|{{ regexReplaceAll "(a)" "a" "$01" }}|{{ regexReplaceAll "(?P<n>a)" "a" "$n$nope" }}',
);
c(
  'regex.replace-empty',
  '{{ regexReplaceAll "a*" "baaac" "-" }}|{{ regexReplaceAll "" "abc" "-" }}|{{ regexReplaceAll "x*" "" "-" }}|{{ regexReplaceAll "b*" "abc" "X" }}|{{ regexReplaceAll "é?" "aéb" "." }}',
);
c(
  'regex.replace-literal',
  '{{ regexReplaceAllLiteral "(a)" "aba" "$1" }}|{{ regexReplaceAllLiteral "" "ab" "-" }}|{{ mustRegexReplaceAllLiteral "b+" "abbc" "${x}" }}',
);
c(
  'regex.findAll-empty',
  '{{ regexFindAll "a*" "baaab" -1 }}|{{ len (regexFindAll "a*" "baaab" -1) }}|{{ regexFindAll "" "abc" -1 | len }}|{{ regexFindAll "x" "abc" -1 }}|{{ toJson (regexFindAll "x" "abc" -1) }}|{{ regexFindAll "a" "aaa" 0 }}|{{ toJson (regexFindAll "a" "aaa" 0) }}|{{ regexFindAll "a" "aaa" 2 }}|{{ regexFindAll "." "é✓x" -1 }}',
);
c(
  'regex.split',
  '{{ regexSplit "," "a,b,c" 2 }}|{{ regexSplit "," "a,b,c" 0 }}|{{ toJson (regexSplit "," "a,b,c" 0) }}|{{ regexSplit "," "" -1 }}|{{ len (regexSplit "," "" -1) }}|{{ regexSplit "" "abc" -1 }}|{{ regexSplit "x*" "axbxc" -1 }}|{{ regexSplit "," ",a," -1 }}|{{ len (regexSplit "" "" -1) }}|{{ regexSplit "b" "abc" 1 }}',
);
c(
  'regex.find-leftmost-empty',
  '[{{ regexFind "x*" "axx" }}]|[{{ regexFind "a|ab" "ab" }}]|[{{ regexFind "(a|ab)(c|bcd)" "abcd" }}]',
);
c(
  'regex.quoteMeta',
  '{{ regexQuoteMeta "1.5+2*[x]?{y}(z)|^$\\\\a" }}|{{ regexQuoteMeta "plain-é" }}|{{ regexMatch (regexQuoteMeta "a.b") "axb" }}',
);
c('regex.match-invalid-false', '{{ regexMatch "(" "a" }}|{{ regexMatch "a**" "a" }}|{{ regexMatch "(?=a)" "a" }}');
c(
  'regex.must-find-ok',
  '{{ mustRegexFind "[0-9]+" "a12" }}|{{ mustRegexFindAll "[0-9]" "a12" -1 }}|{{ mustRegexSplit "," "a,b" -1 }}|{{ mustRegexReplaceAll "b" "abc" "$0" }}|{{ mustRegexMatch "^a" "abc" }}',
);
const badPatterns = [
  ['missing-bracket', '[a'],
  ['missing-bracket-class-end', '[a-'],
  ['missing-paren', '(a'],
  ['missing-paren-nested', '((a)'],
  ['unexpected-paren', 'a)'],
  ['unexpected-paren-2', '())'],
  ['trailing-backslash', 'a\\'],
  ['invalid-escape-z', '\\Z'],
  ['invalid-escape-q', '\\q'],
  ['invalid-escape-C', '\\C'],
  ['backreference', '(a)\\1'],
  ['invalid-escape-8', '\\8'],
  ['invalid-hex', '\\xZ1'],
  ['invalid-hex-short', '\\x4'],
  ['invalid-hex-end', '\\x'],
  ['invalid-hex-brace', '\\x{}'],
  ['invalid-hex-brace-big', '\\x{110000}'],
  ['invalid-hex-brace-open', '\\x{41'],
  ['invalid-escape-unicode', '\\é'],
  ['nested-repeat', 'a**'],
  ['nested-repeat-plus', 'a*+'],
  ['nested-repeat-lazy', 'a*?*'],
  ['nested-repeat-braces', 'a{2}{3}'],
  ['missing-argument-star', '*a'],
  ['missing-argument-plus', 'a|+'],
  ['missing-argument-group', '(?i)*'],
  ['missing-argument-braces', '{2}'],
  ['missing-argument-lazy', '(??)'],
  ['repeat-too-big', 'a{1001}'],
  ['repeat-min-max', 'a{2,1}'],
  ['repeat-huge', 'a{99999999999}'],
  ['repeat-nested-size', '(a{500}){3}'],
  ['repeat-nested-size-lazy', '(a{100}){20}?'],
  ['lookahead', '(?=a)'],
  ['negative-lookahead', '(?!a)'],
  ['lookbehind', '(?<=a)b'],
  ['angle-named', '(?<name>a)'],
  ['named-bad', '(?P<a-b>x)'],
  ['named-empty', '(?P<>x)'],
  ['named-unterminated', '(?P<abc'],
  ['named-P-only', '(?P=a)'],
  ['flags-unterminated', '(?i'],
  ['flags-bad', '(?z)'],
  ['flags-dash-only', '(?-)'],
  ['flags-double-dash', '(?i--s)'],
  ['flags-trailing-dash', '(?i-)'],
  ['class-range', '[z-a]'],
  ['class-range-escape', '[\\d-z]'],
  ['posix-unknown', '[[:foo:]]'],
  ['posix-negated-unknown', '[[:^foo:]]'],
  ['unicode-unknown', '\\p{Foo}'],
  ['unicode-unknown-letter', '\\pX'],
  ['unicode-unterminated', '\\p{Greek'],
  ['unicode-empty', '\\p'],
  ['unicode-short-script', '\\p{Latn}'],
  ['class-backspace', '[\\b]'],
];
for (const [name, pat] of badPatterns) {
  c(`regex.err-${name}`, `{{ mustRegexMatch ${JSON.stringify(pat)} "a" }}`);
}
c('regex.panic-backquote', '{{ regexFind "[" "a" }}');
c('regex.panic-quoted', '{{ regexFindAll "`(" "a" -1 }}');
c('regex.panic-replace', '{{ regexReplaceAll "a{1001}" "a" "b" }}');
c('regex.panic-split', '{{ regexSplit "\\\\" "a" -1 }}');
c(
  'regex.valid-edge',
  '{{ regexMatch "" "" }}|{{ regexMatch "()" "x" }}|{{ regexMatch "a|" "b" }}|{{ regexMatch "(?:)" "" }}|{{ regexMatch "(?i)" "" }}|{{ regexMatch "\\\\p{Any}" "x" }}|{{ regexMatch "[^\\\\x00-\\\\x{10FFFF}]" "x" }}|{{ regexMatch "x{1000}" "x" }}|{{ regexMatch "\\\\pN" "5" }}|{{ regexMatch "\\\\p{Lu}" "a" }}|{{ regexMatch "(?i)\\\\p{Lu}" "a" }}',
);
c(
  'regex.captures',
  '{{ regexReplaceAll "(a)|(b)" "ab" "[$1|$2]" }}|{{ regexFind "(a|)+" "aab" }}|{{ regexFindAll "(?i)[^a]" "aAbB" -1 }}|{{ regexReplaceAll "(a|b)*" "ab" "[$1]" }}|{{ regexReplaceAll "(\\\\w+)@(\\\\w+)\\\\.com" "x bob@example.com y" "${2}:${1}" }}',
);
c(
  'regex.fold-properties',
  '{{ regexFindAll "(?i)\\\\p{Lu}+" "abcDEF12" -1 }}|{{ regexFindAll "(?i)[\\\\p{Greek}x]+" "ΣσςXx" -1 }}|{{ regexFindAll "(?i)\\\\PL+" "aB1" -1 }}|{{ regexFindAll "(?i)[^\\\\p{Ll}]+" "aB1" -1 }}',
);
c(
  'regex.nullable-optional',
  '{{ regexFindAll "(?:\\\\s??|\\\\S+)?" "é 1" -1 }}|{{ regexFindAll "(|a){1,2}" "aa" -1 }}|{{ regexFindAll "(?:a|)?b" "ab b" -1 }}|{{ regexFindAll "(?:|a)??a" "aa" -1 }}|{{ regexReplaceAll "(x?)?" "ab" "<$1>" }}',
);
c(
  'regex.duplicate-names',
  '{{ regexReplaceAll "(?P<n>a)|(?P<n>b)" "ab" "[$n]" }}|{{ regexReplaceAll "(?P<n>x)?(?P<n>a)" "a" "[$n]" }}',
);
c('regex.nullable-loop', '{{ regexFindAll "(?:[a-z]?|.{1,2})*" "_Bé1" -1 }}');
c('regex.capture-in-loop', '{{ regexReplaceAll "(?:(a)|b)+" "ab" "[$1]" }}');
c(
  'regex.unicode-dot',
  '{{ regexFindAll "." "a😀b" -1 }}|{{ regexReplaceAll "" "😀" "-" }}|{{ regexSplit "" "é😀" -1 }}|{{ regexFindAll "[😀-😂]" "😁x" -1 }}',
);

// ---- encoding ----
c('b64.roundtrip', '{{ b64enc "héllo ✓" }}|{{ b64dec (b64enc "héllo ✓") }}|{{ b64enc "\\u0000\\u00ff" }}');
c(
  'b64.invalid',
  '{{ b64dec "YQ" }}|{{ b64dec "YQ=" }}|{{ b64dec "YQ==" }}|{{ b64dec "Y===" }}|{{ b64dec "YQ==x" }}|{{ b64dec "a b" }}|{{ b64dec "YWJj\\nZGVm" }}|{{ b64dec "YW\\r\\nJj" }}|{{ b64dec "=" }}|{{ b64dec "YQ=\\n=" }}|{{ b64dec "YQ=\\nx" }}|{{ b64dec "YWI=YWI=" }}',
);
c('b64.invalid-utf8', '{{ b64dec "/w==" }}|{{ b64dec "wyg=" }}');
c(
  'b32.roundtrip',
  '{{ b32enc "" }}|{{ b32enc "f" }}|{{ b32enc "fo" }}|{{ b32enc "foo" }}|{{ b32enc "foob" }}|{{ b32enc "fooba" }}|{{ b32enc "foobar" }}|{{ b32dec "MZXW6YTBOI======" }}|{{ b32dec (b32enc "héllo") }}',
);
c(
  'b32.invalid',
  '{{ b32dec "MZXW6" }}|{{ b32dec "MZ======" }}|{{ b32dec "M=======" }}|{{ b32dec "MZX=====" }}|{{ b32dec "mzxw6===" }}|{{ b32dec "MZXW6===\\n" }}|{{ b32dec "MZ=====" }}|{{ b32dec "MZ==x===" }}|{{ b32dec "1AAAAAAA" }}',
);
c(
  'hash.unicode',
  '{{ sha1sum "" }}|{{ sha256sum "héllo" }}|{{ adler32sum "" }}|{{ adler32sum "héllo wörld ✓" }}|{{ adler32sum (repeat 10000 "z") }}',
);
c(
  'json.floats',
  '{{ toJson 1e-7 }}|{{ toJson 1e21 }}|{{ toJson 0.000001 }}|{{ toJson -0.0 }}|{{ toJson 1e20 }}|{{ toJson 123456789.5 }}|{{ toJson .big }}|{{ toJson .maxint }}|{{ toJson 1.5e-10 }}|{{ toJson 2.5e+300 }}',
);
c(
  'json.strings',
  '{{ toJson "\\u2028\\u2029\\b\\f\\u0000\\u001f\\u007f" }}|{{ toJson "é✓😀" }}|{{ toRawJson "<&>\\u2028" }}|{{ toJson "tab\\tnl\\ncr\\rq\\"bs\\\\" }}',
);
c(
  'json.types',
  '{{ toJson (splitList "," "a,b") }}|{{ toJson (split "," "a,b") }}|{{ toJson (semver "1.2.3") }}|{{ toJson (until 3) }}|{{ toJson (dict "b" 1 "a" (list)) }}|{{ toJson (chunk 2 .list) }}|{{ toJson (dict "é" 1 "z" 2 "A" 3 "<" 4) }}',
);
c('json.nan', '[{{ toJson (float64 "nan") }}][{{ toJson (list (float64 "inf")) }}]');
c('json.mustToJson-nan', '{{ mustToJson (float64 "nan") }}');
c('json.mustToJson-inf', '{{ mustToJson (float64 "-inf") }}');
c('json.yaml-nested', '[{{ toJson .m }}][{{ toPrettyJson .m }}][{{ toJson (list .m) }}][{{ toJson .m.list }}]', {
  yaml: true,
});
c('json.toRawJson-yaml', '{{ toRawJson .m }}', { yaml: true });
c('json.mustToRawJson-yaml', '{{ mustToRawJson .m }}', { yaml: true });
c('json.mustToPrettyJson-yaml', '{{ mustToPrettyJson (dict "x" .m) }}', { yaml: true });
c(
  'json.pretty',
  '{{ toPrettyJson .emptyMap }}|{{ toPrettyJson .emptyList }}|{{ toPrettyJson (list 1 (dict) (list) (dict "a" (list 1 2))) }}|{{ toPrettyJson "s" }}|{{ toPrettyJson .nil }}|{{ toPrettyJson (dict "k" "a:b,c{d}") }}',
);
c('json.raw', '{{ toRawJson .map }}|{{ toRawJson .html }}|{{ mustToRawJson (list "<") }}|{{ toRawJson .nil }}');
c(
  'json.fromJson',
  '{{ typeOf (fromJson "1") }}|{{ fromJson "[1, 2.5, \\"x\\", null, true, {}]" }}|{{ fromJson "invalid" }}|{{ fromJson "" }}|{{ (fromJson "{\\"a\\":{\\"b\\":1}}").a.b }}|{{ fromJson " 3 " }}|{{ fromJson "1e400" }}|{{ toJson (fromJson "{\\"z\\":1,\\"a\\":[]}") }}|{{ fromJson "\\"\\\\u00e9\\\\n\\"" }}',
);
const badJson = [
  ['empty', ''],
  ['space', '   '],
  ['word', 'nope'],
  ['trailing', '1 2'],
  ['trailing-brace', '{}}'],
  ['unclosed-object', '{"a":1'],
  ['unclosed-array', '[1,2'],
  ['trailing-comma-array', '[1,]'],
  ['trailing-comma-object', '{"a":1,}'],
  ['missing-colon', '{"a" 1}'],
  ['bad-key', '{a:1}'],
  ['single-quote', "{'a':1}"],
  ['bad-after-value', '{"a":1 "b":2}'],
  ['bad-after-element', '[1 2]'],
  ['leading-zero', '01'],
  ['minus-only', '-'],
  ['minus-letter', '-a'],
  ['dot-end', '1.'],
  ['dot-letter', '1.x'],
  ['exp-end', '1e'],
  ['exp-sign-end', '1e+'],
  ['plus', '+1'],
  ['tru', 'tru'],
  ['trux', 'trux'],
  ['fals', 'falsy'],
  ['nul', 'nulx'],
  ['control-in-string', '"a\tb"'],
  ['bad-escape', '"\\x"'],
  ['bad-unicode-escape', '"\\u12g4"'],
  ['unterminated-string', '"abc'],
  ['unicode-char', 'é'],
  ['nan', 'NaN'],
  ['nested-unclosed', '{"a":[{"b":1}'],
  ['comment', '// x'],
  ['big-number', '1e400'],
  ['escape-at-end', '"ab\\'],
  ['unicode-escape-at-end', '"\\u12'],
  ['string-at-end', '"ab'],
];
for (const [name, text] of badJson) c(`json.mustFromJson-${name}`, `{{ mustFromJson ${JSON.stringify(text)} }}`);
c('json.mustFromJson-ok', '{{ mustFromJson "{\\"a\\":[1,{\\"b\\":null}]}" }}');

// ---- env, paths, urls, semver ----
c('env.set', '[{{ env "KAPPS_FUNCS_TEST" }}][{{ expandenv "a $KAPPS_FUNCS_TEST b ${KAPPS_FUNCS_TEST}c" }}]', {
  env: { KAPPS_FUNCS_TEST: 'v1' },
});
c(
  'env.expand-syntax',
  '[{{ expandenv "$$ ${} ${ $ end$" }}][{{ expandenv "$1 ${1} $- ${-} $KAPPS_FUNCS_UNSET_X. ${KAPPS_FUNCS_TEST}${KAPPS_FUNCS_TEST}" }}][{{ expandenv "${a b} $!x" }}][{{ expandenv "no vars" }}]',
  { env: { KAPPS_FUNCS_TEST: 'v' } },
);
for (const [i, p] of [
  '',
  '/',
  '//',
  'a',
  'a/',
  '/a/b/',
  '../a/..',
  'a/../..',
  './a/./b/',
  '/../x',
  'a//b',
  '.',
  '..',
  'x.tar.gz',
  '.bashrc',
  'a.b/c',
  'dir/',
  'é/ü.txt',
  '/a/b/.',
  'a/b/..',
].entries()) {
  const q = JSON.stringify(p);
  c(
    `path.${i}`,
    `[{{ base ${q} }}][{{ dir ${q} }}][{{ clean ${q} }}][{{ ext ${q} }}][{{ isAbs ${q} }}][{{ osBase ${q} }}][{{ osDir ${q} }}][{{ osClean ${q} }}][{{ osExt ${q} }}][{{ osIsAbs ${q} }}]`,
  );
}
for (const [i, u] of [
  'https://user:pa%20ss@example.com:8443/a%2Fb/c d?x=1&y=%20#frag%20ment',
  'http://[fe80::1%25en0]:80/p',
  'mailto:joe@example.com',
  '/relative/path?q',
  'relative/path',
  '//host.only/x',
  'https://example.com?',
  'https://example.com/#',
  'HTTPS://Example.COM/Ä',
  'file:///tmp/x',
  'http://u@h',
  '*',
  '',
  'https://example.com/a?b#c#d',
  'http://h/%41%2f',
].entries()) {
  c(
    `url.parse-${i}`,
    `{{ $u := urlParse ${JSON.stringify(u)} }}{{ $u.scheme }}|{{ $u.host }}|{{ $u.hostname }}|{{ $u.path }}|{{ $u.query }}|{{ $u.opaque }}|{{ $u.fragment }}|{{ $u.userinfo }}|{{ urlJoin $u }}`,
  );
}
for (const [name, u] of [
  ['bad-escape', 'http://h/%zz'],
  ['bad-port', 'http://h:port/'],
  ['colon-first', ':foo'],
  ['colon-segment', 'a:b/c:d'.replace('a:', '1a:')],
  ['control', 'http://h/\u0001'],
  ['bad-host-char', 'http://h^st/'],
  ['missing-bracket', 'http://[::1/'],
  ['bad-userinfo', 'http://us er@h/'],
  ['bad-fragment-escape', 'http://h/#%zz'],
]) {
  c(`url.parse-error-${name}`, `{{ urlParse ${JSON.stringify(u)} }}`);
}
c(
  'url.join',
  '{{ urlJoin (dict "scheme" "https" "host" "example.com" "path" "/a b/ä" "query" "x=1" "fragment" "f g") }}|{{ urlJoin (dict "scheme" "mailto" "opaque" "joe@x") }}|{{ urlJoin (dict "host" "h" "path" "p") }}|{{ urlJoin (dict "path" "a:b") }}|{{ urlJoin (dict "userinfo" "u:p@ss" "host" "h") }}|{{ urlJoin (dict) }}|{{ urlJoin (dict "scheme" "http" "host" "[::1]:80") }}',
);
c('url.join-not-string', '{{ urlJoin (dict "host" 1) }}');
c('url.join-nil', '{{ urlJoin (dict "host" .nil) }}');
c('url.join-bad-userinfo', '{{ urlJoin (dict "userinfo" "a/b" "host" "h") }}');
const constraints = [
  ['>=1.2.3', '1.2.3'],
  ['>1.2', '1.2.5'],
  ['>1.2', '1.3.0'],
  ['<1.2', '1.1.9'],
  ['<=1.2', '1.2.9'],
  ['<=1.2.3', '1.2.4'],
  ['=1.2.3', '1.2.3+build'],
  ['1.2.3', '1.2.4'],
  ['1.2', '1.2.9'],
  ['1.x', '1.9.0'],
  ['1.2.x', '1.3.0'],
  ['*', '0.0.1'],
  ['*', '1.0.0-alpha'],
  ['!=1.2.3', '1.2.3'],
  ['!=1.2', '1.2.5'],
  ['!=1.x', '2.0.0'],
  ['~1.2.3', '1.2.9'],
  ['~1.2.3', '1.3.0'],
  ['~1', '1.9.9'],
  ['~0', '0.5.0'],
  ['~>1.2', '1.2.7'],
  ['^1.2.3', '1.9.0'],
  ['^1.2.3', '2.0.0'],
  ['^0.2.3', '0.2.9'],
  ['^0.2.3', '0.3.0'],
  ['^0.0.3', '0.0.3'],
  ['^0.0.3', '0.0.4'],
  ['^0', '0.9.0'],
  ['^0.0', '0.0.9'],
  ['^0.0', '0.1.0'],
  ['1.2 - 1.4', '1.4.5'],
  ['1.2 - 1.4.2', '1.4.3'],
  ['>=1.0, <2.0', '2.0.0'],
  ['>=1.0 <2.0', '1.5.0'],
  ['>=1.0,<2.0 || >=3.0', '3.1.0'],
  ['>=1.0.0-alpha', '1.0.0-beta'],
  ['>=1.0.0', '1.0.1-alpha'],
  ['>1.0.0-alpha.1', '1.0.0-alpha.10'],
  ['<1.0.0-alpha.beta', '1.0.0-alpha.1'],
  ['=>1.0', '1.0.0'],
  ['=<1.0', '1.0.5'],
  ['>= 1.0', '1.0.0'],
  ['v1.2.3', 'v1.2.3'],
  ['>=X', '1.0.0'],
  ['>1.x', '2.0.0'],
  ['<=1.x', '1.9.9'],
  ['=1.X', '1.5.0'],
  ['1.2.*', '1.2.99'],
];
for (const [i, [cons, v]] of constraints.entries()) {
  c(`semver.compare-${i}`, `{{ semverCompare ${JSON.stringify(cons)} ${JSON.stringify(v)} }}`);
}
for (const [name, cons, v] of [
  ['empty-constraint', '', '1.0.0'],
  ['bad-op', '>>1.0', '1.0.0'],
  ['bad-version-in-constraint', '>=1.0.0.0', '1.0.0'],
  ['or-empty', '>=1.0 ||', '1.0.0'],
  ['bad-version', '>=1.0', '1.0.0.0'],
  ['empty-version', '>=1.0', ''],
  ['leading-zero-pre', '*', '1.0.0-01'],
  ['big-segment', '*', '99999999999999999999.0.0'],
  ['constraint-leading-zero', '>=01.0', '1.0.0'],
]) {
  c(`semver.error-${name}`, `{{ semverCompare ${JSON.stringify(cons)} ${JSON.stringify(v)} }}`);
}
c(
  'semver.fields',
  '{{ $v := semver "v1.2.3-beta.1+build.5" }}{{ $v }}|{{ $v.Major }}|{{ $v.Minor }}|{{ $v.Patch }}|{{ $v.Prerelease }}|{{ $v.Metadata }}|{{ $v.Original }}|{{ $v.String }}|{{ $v.IncPatch }}|{{ $v.IncMinor }}|{{ $v.IncMajor }}',
);
c(
  'semver.lenient',
  '{{ semver "1" }}|{{ semver "1.2" }}|{{ semver "v2" }}|{{ (semver "1.2.3").IncPatch }}|{{ printf "%v|%s" (semver "1.0") (semver "2.0") }}',
);
c('semver.invalid', '{{ semver "x1.2" }}');
c('semver.invalid-prerelease', '{{ semver "1.2.3-01" }}');

// ---- Sugarkube ----
c(
  'custom.exists-more',
  '{{ exists "f" (printf "%s/dir/file.txt" .root) }}|{{ exists "d" (printf "%s/dir/file.txt" .root) }}|{{ exists "d" .root }}|{{ exists "any" (printf "%s/dir" .root) }}|{{ exists "f" (printf "%s/dir/link.txt" .root) }}|{{ exists "f" (printf "%s/dir/dangling" .root) }}|{{ exists "d" (printf "%s/dir/linkdir" .root) }}|{{ exists "f" "" }}',
);
c('custom.exists-not-a-directory', '{{ exists "f" (printf "%s/dir/file.txt/x" .root) }}');
c('custom.exists-nul-byte', '{{ exists "f" "a\\u0000b" }}');
c('custom.findFiles-nul-byte', '{{ listString "x" | findFiles "a\\u0000b" }}');
c('custom.exists-bad-type-dir', '{{ exists "file" .root }}');
c('custom.findFiles-walk-order', '{{ listString "" "." | findFiles .root | join "\\n" }}');
c(
  'custom.findFiles-patterns',
  '{{ listString "\\\\.txt$" "^nomatch" "(?i)README" "/dir$" | findFiles .root | join "\\n" }}',
);
c('custom.findFiles-root-trailing-slash', '{{ listString "file" | findFiles (printf "%s/dir/" .root) | join "," }}');
c('custom.findFiles-root-symlink', '{{ listString "." | findFiles (printf "%s/dir/linkdir" .root) }}');
c('custom.findFiles-leftmost-empty', '{{ listString "z*" "x*" | findFiles .root | join "," }}');
c(
  'custom.findFiles-root-unclean',
  '{{ listString "b.txt" | findFiles (printf "%s/dir/../dir/./sub" .root) | join "," }}',
);
c('custom.findFiles-mapPrintF', '{{ mapPrintF "/%s\\\\.txt$" (list "file" "b") | findFiles .root | join "," }}');
c('custom.findFiles-nil-patterns', '{{ findFiles .root .nil }}');
c('custom.findFiles-splitList', '{{ findFiles .root (splitList "," "file,b") | len }}');
c(
  'custom.mapPrintF-more',
  '{{ mapPrintF "%v" (until 3) }}|{{ mapPrintF "%d" (list 1 2) }}|{{ mapPrintF "%s" .map }}|{{ mapPrintF "x" .list }}|{{ mapPrintF "%s-%s" .list }}|{{ printf "%T" (mapPrintF "%s" .list) }}|{{ mapPrintF "%v" .mixed }}',
);
c(
  'custom.removeEmpty-more',
  '{{ removeEmpty (splitList "," ",a,,b,") }}|{{ removeEmpty .mixed }}|{{ removeEmpty (until 3) }}|{{ removeEmpty .nil }}|{{ printf "%T" (removeEmpty .list) }}|{{ removeEmpty (list 0.0 .emptyList .emptyMap) }}',
);
c(
  'custom.listString-more',
  '{{ listString }}|{{ printf "%T" (listString) }}|{{ listString "a" "" "b" }}|{{ toJson (listString) }}',
);
c('custom.listString-nil', '{{ listString .nil }}');
c('custom.isSet-yaml', '{{ isSet .m "z" }}|{{ isSet .m "nope" }}|{{ isSet .ints "1" }}|{{ isSet .m "empty" }}', {
  yaml: true,
});
c('custom.isSet-nil', '{{ isSet .nope "a" }}', { yaml: true });
c('custom.isSet-int-key', '{{ isSet .m 1 }}', { yaml: true });

// ---- unsupported ----
for (const name of [
  'now',
  'date',
  'toDate',
  'duration',
  'bcrypt',
  'genCA',
  'getHostByName',
  'encryptAES',
  'unixEpoch',
]) {
  c(`unsupported.${name}`, `{{ if false }}{{ ${name} }}{{ end }}`);
}

const lines = cases.map((k) => {
  const parts = [`"id": ${JSON.stringify(k.id)}`, `"template": ${JSON.stringify(k.template)}`];
  if (k.yaml) parts.push(`"yaml": ${JSON.stringify(YAML)}`);
  else parts.push(`"data": ${DATA}`);
  if (k.env) parts.push(`"env": ${JSON.stringify(k.env)}`);
  if (k.strict !== undefined) parts.push(`"strict": ${k.strict}`);
  return `{${parts.join(', ')}}`;
});
const ids = new Set();
for (const k of cases) {
  if (ids.has(k.id)) throw new Error(`duplicate case id ${k.id}`);
  ids.add(k.id);
}
const out = fileURLToPath(new URL('../../fixtures/go-template/funcs-cases.json', import.meta.url));
writeFileSync(out, `{"cases":[\n${lines.join(',\n')}\n]}\n`);
console.log(`${cases.length} cases written to ${out}`);
