// Regenerates aws-provider-schema.json.gz: the argument/block schema of every resource and data
// source of the AWS Terraform provider, taken from the jsii manifest of @cdktn/provider-aws (a
// prebuilt binding generated from `terraform providers schema -json`). The package is >400 MB, so
// it is not a dependency of the validator; install it only to regenerate:
//
//   npm install --no-save --ignore-scripts --legacy-peer-deps @cdktn/provider-aws@25.7.0
//   node schema/extract-schema.mjs [path/to/.jsii]
//
// Output shape: {provider, providerVersion, source, provider_config: Block, resource: {type: Block},
// data: {type: Block}} where Block = {a: [argument names], b: {block name: Block},
// r: [required arguments and blocks], open?: true}.
// Argument names are the snake_case Terraform names read from each property's registry doc anchor
// ("...docs/resources/lambda_function#snap_start"), not guessed from the camelCase jsii name.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const jsiiPath = process.argv[2]
  ?? join(dirname(createRequire(join(here, "..", "package.json")).resolve("@cdktn/provider-aws/package.json")), ".jsii");
const assembly = JSON.parse(readFileSync(jsiiPath, "utf8"));
const types = assembly.types;

function snakeCase(camel) {
  return camel.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/([A-Z])([A-Z][a-z])/g, "$1_$2").toLowerCase();
}

/** The Terraform name of a struct property: the anchor of its registry link, else snake_case. */
function terraformName(prop) {
  const text = `${prop.docs?.summary ?? ""} ${prop.docs?.remarks ?? ""}`;
  const m = text.match(/\/docs\/(?:resources|data-sources)\/[a-z0-9_]+#([a-z0-9_]+) /)
    ?? text.match(/\/docs#([a-z0-9_]+) /);
  return m ? m[1] : snakeCase(prop.name);
}

/** The fqn of a provider struct reachable from a type reference, and whether it sits in a map. */
function structOf(typeRef) {
  if (!typeRef) return null;
  if (typeRef.fqn) {
    const t = types[typeRef.fqn];
    return t && t.datatype && t.assembly === assembly.name ? { fqn: typeRef.fqn, map: false } : null;
  }
  if (typeRef.collection) {
    const inner = structOf(typeRef.collection.elementtype);
    return inner ? { fqn: inner.fqn, map: inner.map || typeRef.collection.kind === "map" } : null;
  }
  if (typeRef.union) {
    for (const u of typeRef.union.types) {
      const inner = structOf(u);
      if (inner) return inner;
    }
  }
  return null;
}

function block(fqn, seen = new Set()) {
  // A few structs are recursive (wafv2 rule statements); below the first repetition the block is
  // marked open ({open: true}) and left unchecked.
  if (seen.has(fqn)) return { a: [], open: true };
  seen.add(fqn);
  const a = [];
  const b = {};
  const r = [];
  for (const prop of types[fqn].properties ?? []) {
    const name = terraformName(prop);
    const nested = structOf(prop.type);
    if (nested && !nested.map) b[name] = block(nested.fqn, new Set(seen));
    else a.push(name);
    if (!prop.optional) r.push(name);
  }
  a.sort();
  const result = { a };
  if (Object.keys(b).length) result.b = Object.fromEntries(Object.entries(b).sort());
  if (r.length) result.r = r.sort();
  return result;
}

const out = { provider: "hashicorp/aws", providerVersion: null, source: `${assembly.name}@${assembly.version}`, provider_config: null, resource: {}, data: {} };
for (const t of Object.values(types)) {
  if (t.kind !== "class" || !t.initializer) continue;
  const summary = t.initializer.docs?.summary ?? "";
  const config = t.initializer.parameters?.find((p) => p.name === "config");
  if (!config) continue;
  const m = summary.match(/registry\.terraform\.io\/providers\/hashicorp\/aws\/([0-9.]+)\/docs(?:\/(resources|data-sources)\/[a-z0-9_]+)? ([a-z0-9_]+)\} (Resource|Data Source|provider)/i);
  if (!m) continue;
  out.providerVersion ??= m[1];
  const schema = block(config.type.fqn);
  if (!m[2]) out.provider_config = schema;
  else if (m[2] === "resources") out.resource[m[3]] = schema;
  else out.data[m[3]] = schema;
}
const sorted = (o) => Object.fromEntries(Object.entries(o).sort());
out.resource = sorted(out.resource);
out.data = sorted(out.data);
if (!out.provider_config) throw new Error("provider configuration struct not found");
const target = join(here, "aws-provider-schema.json.gz");
const json = JSON.stringify(out);
writeFileSync(target, gzipSync(json, { level: 9 }));
console.log(`${Object.keys(out.resource).length} resources, ${Object.keys(out.data).length} data sources, `
  + `AWS provider ${out.providerVersion}, ${json.length} bytes JSON -> ${target}`);
