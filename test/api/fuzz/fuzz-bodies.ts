import fc from "fast-check";
import {
  anyJson,
  deepJson,
  hostileKey,
  hugeJson,
  invalidUtf8,
  malformedJson,
  notObjectBody,
  ODD_CONTENT_TYPES,
  toJsonText,
  type Pool,
} from "./fuzz-values.js";

// JSON request bodies built to be refused: a valid body of the route with one to three fields given values that
// are invalid for them, a required field dropped, an unknown field on a strict route, not an object, not JSON,
// not UTF-8, too deep, too big, or sent as another media type. Also the "maybe valid" bodies: a valid body with
// one field given a hostile value of the right type (NUL bytes, lone surrogates, huge numbers...).

export type BodySpec = {
  /** A valid body of the route. */
  base: () => Record<string, unknown>;
  /** Per field: values that make the body invalid whatever the other fields hold. */
  invalid: Record<string, Pool>;
  /** Fields whose absence makes the body invalid. */
  required: string[];
  /** Unknown fields are refused (vault and webhook routes), so one alone makes the body invalid. */
  strict: boolean;
  /** No body at all is a valid request (whitespace-only text counts as none): such bodies are never generated. */
  emptyIsValid?: boolean;
  /** Per field: hostile values of the right type that may be accepted (phase "maybe": writes allowed). */
  hostile?: Record<string, Pool>;
};

export type GeneratedBody = { body: string | Uint8Array; contentType: string | null; note: string };

const json = (v: unknown, note: string, contentType: string | null = "application/json"): GeneratedBody => ({
  body: toJsonText(v),
  contentType,
  note,
});

/** A body built from the valid one by making one to three of its fields invalid (and maybe adding noise). */
function wrongFields(spec: BodySpec): fc.Arbitrary<GeneratedBody> {
  const fields = Object.keys(spec.invalid);
  return fc
    .shuffledSubarray(fields, { minLength: 1, maxLength: Math.min(3, fields.length) })
    .chain((fs) =>
      fc.tuple(
        fc.constant(fs),
        fc.tuple(...fs.map((f) => spec.invalid[f]!.arb)),
        // Unknown keys are ignored by lenient routes: noise only, the wrong fields make the body invalid.
        spec.strict ? fc.constant({}) : fc.dictionary(hostileKey, anyJson, { maxKeys: 2 }),
      ),
    )
    .map(([fs, values, noise]) => {
      const body: Record<string, unknown> = { ...spec.base(), ...noise };
      fs.forEach((f, i) => (body[f] = values[i]));
      return json(body, `wrong value: ${fs.join(", ")}`);
    });
}

function missingField(spec: BodySpec): fc.Arbitrary<GeneratedBody> {
  return fc.constantFrom(...spec.required).map((f) => missingBody(spec, f));
}

function unknownField(spec: BodySpec): fc.Arbitrary<GeneratedBody> {
  return fc
    .tuple(hostileKey, anyJson)
    .filter(([k]) => !(k in spec.base()) && k !== "__proto__")
    .map(([k, v]) => json({ ...spec.base(), [k]: v }, `unknown field ${JSON.stringify(k.slice(0, 20))}`));
}

/** `__proto__` and duplicate keys: the last duplicate wins in JSON.parse, and it is an invalid value. */
function trickyKeys(spec: BodySpec): fc.Arbitrary<GeneratedBody> {
  const fields = Object.keys(spec.invalid);
  return fc
    .tuple(fc.constantFrom(...fields), fc.constantFrom("proto", "duplicate", "constructor"))
    .chain(([f, how]) => spec.invalid[f]!.arb.map((bad) => ({ f, how, bad })))
    .map(({ f, how, bad }) => {
      const base = spec.base();
      const rest = Object.entries(base)
        .filter(([k]) => k !== f)
        .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`);
      const valid = `${JSON.stringify(f)}:${toJsonText(base[f] ?? "x")}`;
      const invalid = `${JSON.stringify(f)}:${toJsonText(bad)}`;
      const parts =
        how === "duplicate"
          ? [valid, ...rest, invalid]
          : [`"${how === "proto" ? "__proto__" : "constructor"}":{${valid},"polluted":true}`, ...rest, invalid];
      return { body: `{${parts.join(",")}}`, contentType: "application/json", note: `${how} keys, ${f} invalid` };
    });
}

/** Every kind of refused body but the huge ones (those are few: see hugeBody). */
export function invalidBody(spec: BodySpec): fc.Arbitrary<GeneratedBody> {
  const validText = toJsonText(spec.base());
  const arbs: fc.WeightedArbitrary<GeneratedBody>[] = [
    { weight: 8, arbitrary: wrongFields(spec) },
    { weight: 2, arbitrary: trickyKeys(spec) },
    { weight: 2, arbitrary: notObjectBody.map((v) => json(v, "not an object")) },
    { weight: 4, arbitrary: malformedJson(validText).map((t) => ({ body: t, contentType: "application/json", note: "malformed JSON" })) },
    { weight: 1, arbitrary: deepJson().map((t) => ({ body: t, contentType: "application/json", note: "deep nesting" })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...Object.keys(spec.invalid))
        .chain((f) => deepJson(f).map((t) => ({ body: t, contentType: "application/json", note: `deep nesting in ${f}` }))),
    },
    { weight: 1, arbitrary: invalidUtf8.map((b) => ({ body: b, contentType: "application/json", note: "not UTF-8" })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...ODD_CONTENT_TYPES, null), wrongFields(spec))
        .map(([ct, b]) => ({ ...b, contentType: ct, note: `content-type ${ct ?? "none"}, ${b.note}` })),
    },
  ];
  if (spec.required.length) arbs.push({ weight: 2, arbitrary: missingField(spec) });
  if (spec.strict) arbs.push({ weight: 1, arbitrary: unknownField(spec) });
  const empty = (b: GeneratedBody) => typeof b.body === "string" && b.body.trim() === "";
  return fc.oneof(...arbs).filter((b) => !(spec.emptyIsValid && empty(b)));
}

/** About 2 MB of JSON (expect 413 once a limit exists; "not 5xx" for now). */
export const hugeBody = (field: string): fc.Arbitrary<GeneratedBody> =>
  hugeJson(field).map((t) => ({ body: t, contentType: "application/json", note: `huge body (${(t.length / 1024 / 1024).toFixed(1)} MB)` }));

/** A valid body with one field given a hostile value of the right type: may be accepted (and write). */
export function maybeValidBody(spec: BodySpec): fc.Arbitrary<GeneratedBody> {
  const hostile = spec.hostile ?? {};
  return fc
    .constantFrom(...Object.keys(hostile))
    .chain((f) => hostile[f]!.arb.map((v) => ({ f, v })))
    .map(({ f, v }) => json({ ...spec.base(), [f]: v }, `hostile value: ${f}`));
}

/** One body per curated value of each field (the rest of the body valid): every constant is sent once. */
export function enumerateBodies(spec: BodySpec, which: "invalid" | "hostile"): GeneratedBody[] {
  const pools = (which === "invalid" ? spec.invalid : spec.hostile) ?? {};
  const out = Object.entries(pools).flatMap(([f, p]) =>
    p.consts.map((v) => json({ ...spec.base(), [f]: v }, `${which === "invalid" ? "wrong" : "hostile"} value: ${f}`)),
  );
  if (which === "invalid") for (const f of spec.required) out.push(missingBody(spec, f));
  return out;
}

function missingBody(spec: BodySpec, f: string): GeneratedBody {
  const body = spec.base();
  delete body[f];
  return json(body, `missing: ${f}`);
}
