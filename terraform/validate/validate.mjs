// Offline validation of Tierlog's Terraform, without a terraform binary, credentials or network.
//
//   node validate.mjs [--root <dir with .tf files>] [--repo <repository root>]
//
// Defaults: --root is the directory above this script (terraform/), --repo the one above that.
// What it checks, per directory of .tf files (a Terraform module):
//   1. every .tf file parses with HashiCorp's HCL parser (@cdktn/hcl2json, the Go parser as WebAssembly);
//   2. every resource/data source type, argument and nested block (also inside `dynamic` blocks) exists
//      in the AWS provider 6.66.0 schema (schema/aws-provider-schema.json.gz), and required ones are set;
//   3. every var., local., module., data. and resource reference resolves, module calls pass only
//      declared variables and all required ones, and module.X.Y names an output of X;
//   4. reusable modules (modules/*) follow the five-file style: typed, described variables, described
//      outputs, no provider blocks, a bounded AWS provider version;
//   5. each aws_lambda_function handler names a public class and public method in the Java sources, and
//      its artifact path (resolved through the module call that sets it) is the jar the Maven build of
//      that Java module produces.
// It does not check attribute value types or computed attributes read from other resources (aws_x.y.arn):
// the schema extract holds configurable arguments only.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { getReferencesInExpression, parse } from "@cdktn/hcl2json";

const here = dirname(fileURLToPath(import.meta.url));
const META_ARGUMENTS = new Set(["count", "for_each", "provider", "depends_on", "lifecycle", "provisioner", "connection"]);
const MODULE_META = new Set(["source", "version", "providers", "count", "for_each", "depends_on"]);
const BUILTIN_ROOTS = new Set(["each", "count", "self", "path", "terraform"]);
const MODULE_FILES = ["main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md"];

let cachedSchema;
export function loadSchema() {
  cachedSchema ??= JSON.parse(gunzipSync(readFileSync(join(here, "schema", "aws-provider-schema.json.gz"))).toString("utf8"));
  return cachedSchema;
}

function tfFiles(dir, skip) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name === "node_modules" || name.startsWith(".") || skip.has(resolve(path))) continue;
      out.push(...tfFiles(path, skip));
    } else if (name.endsWith(".tf")) {
      out.push(path);
    }
  }
  return out;
}

const isExpression = (v) => typeof v === "string" && v.includes("${");
/** The literal a `"${var.x}"`-free string holds, or null when it is an expression. */
const literal = (v) => (typeof v === "string" && !isExpression(v) ? v : null);

function newModule(dir) {
  return { dir, files: [], variables: {}, locals: {}, outputs: {}, resources: {}, data: {}, modules: {}, providers: [], terraform: [], moved: [], bodies: [] };
}

/** Validates the Terraform under `root`; returns {errors, notes, stats}. Never throws on bad input. */
export async function validate({ root = resolve(here, ".."), repo = resolve(root, ".."), skipDirs = [here] } = {}) {
  root = resolve(root);
  repo = resolve(repo);
  const errors = [];
  const notes = [];
  const stats = { files: 0, modules: 0, resources: 0, dataSources: 0, moduleCalls: 0, arguments: 0, blocks: 0, references: 0, lambdaChecks: 0 };
  const rel = (p) => relative(repo, p) || ".";
  const schema = loadSchema();

  // 1. parse
  const modules = new Map();
  for (const file of tfFiles(root, new Set(skipDirs.map((d) => resolve(d))))) {
    stats.files++;
    let doc;
    try {
      doc = await parse(file, readFileSync(file, "utf8"));
    } catch (e) {
      errors.push(`${rel(file)}: HCL parse error: ${String(e.message ?? e).replace(/^parse config: /, "")}`);
      continue;
    }
    const dir = dirname(file);
    if (!modules.has(dir)) modules.set(dir, newModule(dir));
    const m = modules.get(dir);
    m.files.push(file);
    for (const [kind, byName] of Object.entries(doc)) {
      if (kind === "locals") {
        for (const block of byName) for (const [k, v] of Object.entries(block)) m.locals[k] = { file, value: v };
      } else if (kind === "resource" || kind === "data") {
        const target = kind === "resource" ? m.resources : m.data;
        for (const [type, byLabel] of Object.entries(byName)) {
          for (const [name, blocks] of Object.entries(byLabel)) {
            const key = `${type}.${name}`;
            if (target[key]) errors.push(`${rel(file)}: duplicate ${kind} ${key}`);
            target[key] = { file, type, name, body: blocks[0] };
          }
        }
      } else if (kind === "variable" || kind === "output" || kind === "module") {
        const target = { variable: m.variables, output: m.outputs, module: m.modules }[kind];
        for (const [name, blocks] of Object.entries(byName)) {
          if (target[name]) errors.push(`${rel(file)}: duplicate ${kind} "${name}"`);
          target[name] = { file, body: blocks[0] };
        }
      } else if (kind === "provider") {
        for (const [name, blocks] of Object.entries(byName)) for (const body of blocks) m.providers.push({ file, name, body });
      } else if (kind === "terraform") {
        for (const body of byName) m.terraform.push({ file, body });
      } else if (kind === "moved") {
        // checked on their own below: `from` names an address that no longer exists, by design
        for (const body of byName) m.moved.push({ file, body });
        continue;
      } else {
        errors.push(`${rel(file)}: unexpected top-level block "${kind}"`);
      }
      m.bodies.push({ file, kind, value: byName });
    }
  }
  stats.modules = modules.size;

  // 2. schema
  const checkBlock = (body, block, where, file, top) => {
    if (block.open) return;
    const present = new Set();
    for (const [key, value] of Object.entries(body)) {
      if (top && META_ARGUMENTS.has(key)) continue;
      if (key === "dynamic") {
        for (const [label, dyns] of Object.entries(value)) {
          present.add(label);
          stats.blocks++;
          const nested = block.b?.[label];
          if (!nested) {
            errors.push(`${rel(file)}: ${where}: unknown dynamic block "${label}"`);
            continue;
          }
          for (const dyn of dyns) for (const content of dyn.content ?? []) checkBlock(content, nested, `${where}.${label}`, file, false);
        }
        continue;
      }
      present.add(key);
      if (block.b?.[key]) {
        stats.blocks++;
        const items = Array.isArray(value) ? value : [value];
        for (const item of items) {
          if (item && typeof item === "object" && !Array.isArray(item)) checkBlock(item, block.b[key], `${where}.${key}`, file, false);
        }
      } else if (block.a.includes(key)) {
        stats.arguments++;
      } else {
        errors.push(`${rel(file)}: ${where}: unsupported argument or block "${key}"`);
      }
    }
    for (const required of block.r ?? []) {
      if (!present.has(required)) errors.push(`${rel(file)}: ${where}: required argument or block "${required}" is missing`);
    }
  };
  for (const m of modules.values()) {
    for (const [kind, entries, kindSchema] of [["resource", m.resources, schema.resource], ["data", m.data, schema.data]]) {
      for (const [key, r] of Object.entries(entries)) {
        if (kind === "resource") stats.resources++;
        else stats.dataSources++;
        const block = kindSchema[r.type];
        if (!block) {
          errors.push(`${rel(r.file)}: unknown ${kind === "resource" ? "resource" : "data source"} type "${r.type}" (AWS provider ${schema.providerVersion})`);
          continue;
        }
        checkBlock(r.body, block, kind === "data" ? `data.${key}` : key, r.file, true);
      }
    }
    for (const p of m.providers) {
      if (p.name !== "aws") errors.push(`${rel(p.file)}: provider "${p.name}" has no schema here (only aws is checked)`);
      else checkBlock(p.body, schema.provider_config, "provider.aws", p.file, false);
    }
  }

  // 3. references and module calls
  const moduleDirOf = (m, call) => {
    const source = literal(call.body.source);
    if (!source || !(source.startsWith("./") || source.startsWith("../"))) return null;
    return resolve(m.dir, source);
  };
  for (const m of modules.values()) {
    const dynamicRoots = new Set();
    const collectDynamics = (v) => {
      if (Array.isArray(v)) v.forEach(collectDynamics);
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (k === "dynamic") {
            for (const [label, dyns] of Object.entries(x)) {
              dynamicRoots.add(label);
              for (const d of dyns) if (literal(d.iterator)) dynamicRoots.add(d.iterator);
            }
          }
          collectDynamics(x);
        }
      }
    };
    m.bodies.forEach((b) => collectDynamics(b.value));

    const strings = [];
    const collectStrings = (v, file) => {
      if (typeof v === "string") {
        if (isExpression(v)) strings.push({ file, text: v });
      } else if (Array.isArray(v)) v.forEach((x) => collectStrings(x, file));
      else if (v && typeof v === "object") Object.values(v).forEach((x) => collectStrings(x, file));
    };
    for (const b of m.bodies) {
      if (b.kind !== "variable") collectStrings(b.value, b.file);
      else {
        // a type constraint (list(string)) is not an expression that references anything
        for (const blocks of Object.values(b.value)) for (const { type, ...rest } of blocks) collectStrings(rest, b.file);
      }
    }
    for (const { file, text } of strings) {
      let refs;
      try {
        refs = await getReferencesInExpression(file, text);
      } catch (e) {
        errors.push(`${rel(file)}: cannot parse expression ${JSON.stringify(text.slice(0, 80))}: ${e.message ?? e}`);
        continue;
      }
      for (const ref of refs) {
        stats.references++;
        const parts = ref.value.split(".");
        const [rootName, a, b] = parts;
        const problem = (() => {
          if (rootName === "var") return m.variables[a] ? null : `undeclared variable var.${a}`;
          if (rootName === "local") return m.locals[a] ? null : `undeclared local value local.${a}`;
          if (rootName === "data") return m.data[`${a}.${b}`] ? null : `undeclared data source data.${a}.${b}`;
          if (rootName === "module") {
            const call = m.modules[a];
            if (!call) return `undeclared module module.${a}`;
            const childDir = moduleDirOf(m, call);
            const child = childDir && modules.get(childDir);
            if (child && b && !child.outputs[b]) return `module.${a} (${rel(childDir)}) has no output "${b}"`;
            return null;
          }
          if (BUILTIN_ROOTS.has(rootName) || dynamicRoots.has(rootName)) return null;
          if (/^[a-z][a-z0-9]*_[a-z0-9_]+$/.test(rootName)) {
            if (!a) return `incomplete resource reference ${ref.value}`;
            return m.resources[`${rootName}.${a}`] ? null : `undeclared resource ${rootName}.${a}`;
          }
          return `unknown reference ${ref.value}`;
        })();
        if (problem) errors.push(`${rel(file)}: ${problem}`);
      }
    }

    // moved blocks: `to` is a declared resource, `from` one that is no longer declared (terraform refuses both mistakes)
    const address = (v) => typeof v === "string" && v.match(/^\$\{([a-z][a-z0-9_]*)\.([A-Za-z0-9_-]+)(\[[^\]]*\])?\}$/);
    for (const { file, body } of m.moved) {
      const [from, to] = [address(body.from), address(body.to)];
      if (!from || !to) errors.push(`${rel(file)}: moved block needs resource addresses in from and to`);
      else {
        if (!m.resources[`${to[1]}.${to[2]}`]) errors.push(`${rel(file)}: moved to undeclared resource ${to[1]}.${to[2]}`);
        if (!from[3] && m.resources[`${from[1]}.${from[2]}`]) errors.push(`${rel(file)}: moved from ${from[1]}.${from[2]}, which is still declared`);
      }
    }

    for (const [name, call] of Object.entries(m.modules)) {
      stats.moduleCalls++;
      const childDir = moduleDirOf(m, call);
      if (!childDir) {
        notes.push(`${rel(call.file)}: module "${name}" has a non-local source; its inputs are not checked`);
        continue;
      }
      const child = modules.get(childDir);
      if (!child) {
        errors.push(`${rel(call.file)}: module "${name}": source ${call.body.source} has no .tf files`);
        continue;
      }
      for (const arg of Object.keys(call.body)) {
        if (!MODULE_META.has(arg) && !child.variables[arg]) errors.push(`${rel(call.file)}: module "${name}": ${rel(childDir)} has no variable "${arg}"`);
      }
      for (const [v, decl] of Object.entries(child.variables)) {
        if (!("default" in decl.body) && !(v in call.body)) errors.push(`${rel(call.file)}: module "${name}": required variable "${v}" is not set`);
      }
    }
  }

  // 4. module style (reusable modules only: modules/<name>)
  for (const m of modules.values()) {
    const isReusable = relative(root, m.dir).split(sep)[0] === "modules";
    for (const f of MODULE_FILES) if (!existsSync(join(m.dir, f))) errors.push(`${rel(m.dir)}: missing ${f}`);
    if (isReusable) for (const p of m.providers) errors.push(`${rel(p.file)}: provider blocks belong in roots and examples, not in a reusable module`);
    for (const [name, v] of Object.entries(m.variables)) {
      if (!v.body.type) errors.push(`${rel(v.file)}: variable "${name}" has no type`);
      if (!literal(v.body.description)) errors.push(`${rel(v.file)}: variable "${name}" has no description`);
      if (JSON.stringify(v.body.default ?? null).includes("${")) errors.push(`${rel(v.file)}: variable "${name}": a default cannot hold an expression`);
    }
    for (const [name, o] of Object.entries(m.outputs)) if (!literal(o.body.description)) errors.push(`${rel(o.file)}: output "${name}" has no description`);
    const aws = m.terraform.flatMap((t) => t.body.required_providers ?? []).map((rp) => rp.aws).find(Boolean);
    const hasVersion = m.terraform.some((t) => literal(t.body.required_version));
    if (!hasVersion) errors.push(`${rel(m.dir)}: versions.tf sets no required_version`);
    if (!aws || literal(aws.source) !== "hashicorp/aws") errors.push(`${rel(m.dir)}: versions.tf does not require hashicorp/aws`);
    else if (!/^(~>|=|\d)|</.test(literal(aws.version) ?? "")) errors.push(`${rel(m.dir)}: the aws provider version "${aws.version}" has no upper bound`);
  }

  // 5. Lambda handler and artifact
  const variableDefault = (m, expr) => {
    const match = typeof expr === "string" && expr.match(/^\$\{(var|local)\.([A-Za-z0-9_-]+)\}$/);
    if (!match) return expr;
    return match[1] === "var" ? m.variables[match[2]]?.body.default : m.locals[match[2]]?.value;
  };
  const callersOf = (dir) => [...modules.values()].flatMap((m) => Object.entries(m.modules)
    .filter(([, call]) => moduleDirOf(m, call) === dir).map(([name, call]) => ({ m, name, call })));
  for (const m of modules.values()) {
    for (const [key, fn] of Object.entries(m.resources).filter(([, r]) => r.type === "aws_lambda_function")) {
      stats.lambdaChecks++;
      const handler = literal(variableDefault(m, fn.body.handler));
      const hm = handler?.match(/^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)::([A-Za-z_$][\w$]*)$/);
      if (!hm) {
        errors.push(`${rel(fn.file)}: ${key}: handler ${JSON.stringify(fn.body.handler)} is not a literal "package.Class::method"`);
        continue;
      }
      const [, className, method] = hm;
      const javaPath = join("src", "main", "java", ...className.split(".")) + ".java";
      const candidates = readdirSync(repo).map((d) => join(repo, d)).filter((d) => existsSync(join(d, javaPath)));

      // the artifact: a literal path in the module, or the value its callers pass for the variable
      const artifactPaths = [];
      const direct = literal(fn.body.filename);
      const viaVar = typeof fn.body.filename === "string" && fn.body.filename.match(/^\$\{var\.([A-Za-z0-9_-]+)\}$/);
      if (direct) artifactPaths.push({ from: fn.file, path: resolve(m.dir, direct) });
      else if (viaVar) {
        for (const { m: caller, name, call } of callersOf(m.dir)) {
          let value = variableDefault(caller, call.body[viaVar[1]] ?? m.variables[viaVar[1]]?.body.default);
          if (typeof value !== "string") {
            errors.push(`${rel(call.file)}: module "${name}": cannot resolve the Lambda artifact path "${viaVar[1]}"`);
            continue;
          }
          value = value.replaceAll("${path.module}", caller.dir).replaceAll("${path.root}", caller.dir).replaceAll("${path.cwd}", caller.dir);
          if (isExpression(value)) errors.push(`${rel(call.file)}: module "${name}": artifact path ${value} is not a plain path`);
          else artifactPaths.push({ from: call.file, path: resolve(caller.dir, value) });
        }
        if (!artifactPaths.length) notes.push(`${rel(fn.file)}: ${key}: no caller sets the artifact path; not checked`);
      } else {
        errors.push(`${rel(fn.file)}: ${key}: filename must be a path or a variable holding one`);
      }
          if (!candidates.length) {
        const expected = artifactPaths.filter((a) => relative(repo, a.path).split(sep)[1] === "target")
          .map((a) => join(relative(repo, a.path).split(sep)[0], javaPath)).join(" or ") || `<module>/${javaPath}`;
        errors.push(`${rel(fn.file)}: ${key}: handler class ${className} not found: no ${expected} in ${repo} (the Java module's sources must exist for this check)`);
      } else {
        const source = readFileSync(join(candidates[0], javaPath), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
        const simple = className.split(".").pop();
        if (!new RegExp(`public\\s+(?:final\\s+|abstract\\s+)*class\\s+${simple}\\b`).test(source)) errors.push(`${rel(fn.file)}: ${key}: ${rel(join(candidates[0], javaPath))} declares no public class ${simple}`);
        else if (!new RegExp(`public\\s+(?:final\\s+|synchronized\\s+)*[\\w.<>\\[\\], ?]+\\s+${method}\\s*\\(`).test(source)) errors.push(`${rel(fn.file)}: ${key}: ${simple} has no public method ${method}`);
      }
      for (const { from, path } of artifactPaths) {
        const relPath = relative(repo, path);
        const [moduleDir, target, jar, ...rest] = relPath.split(sep);
        if (target !== "target" || !jar?.endsWith(".jar") || rest.length) {
          errors.push(`${rel(from)}: ${key}: artifact ${relPath} is not <module>/target/<name>.jar of the Maven build`);
          continue;
        }
        if (candidates.length && resolve(repo, moduleDir) !== candidates[0]) errors.push(`${rel(from)}: ${key}: artifact ${relPath} is not built from ${rel(candidates[0])}, which holds the handler`);
        const pomPath = join(repo, moduleDir, "pom.xml");
        if (!existsSync(pomPath)) {
          notes.push(`${rel(pomPath)} is absent: skipped the check that it builds ${jar}`);
          continue;
        }
        const pom = readFileSync(pomPath, "utf8").replace(/<!--[\s\S]*?-->/g, "");
        const names = [...pom.matchAll(/<finalName>\s*([^<\s]+)\s*<\/finalName>/g)].map((x) => `${x[1]}.jar`);
        const outputs = [...pom.matchAll(/<outputFile>\s*([^<\s]+)\s*<\/outputFile>/g)].map((x) => x[1].split("/").pop());
        if (![...names, ...outputs].includes(jar)) errors.push(`${rel(from)}: ${key}: ${rel(pomPath)} does not produce ${jar} (no matching <finalName> or shade <outputFile>)`);
      }
    }
  }
  return { errors, notes, stats };
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const root = resolve(opt("--root") ?? resolve(here, ".."));
  const repo = resolve(opt("--repo") ?? resolve(root, ".."));
  const { errors, notes, stats } = await validate({ root, repo });
  const schema = loadSchema();
  for (const n of notes) console.log(`note: ${n}`);
  for (const e of errors) console.error(`error: ${e}`);
  console.log(`terraform-validate: ${relative(process.cwd(), root) || "."}: ${stats.files} files in ${stats.modules} modules; `
    + `${stats.resources} resources, ${stats.dataSources} data sources, ${stats.moduleCalls} module calls; `
    + `${stats.arguments} arguments and ${stats.blocks} blocks checked against AWS provider ${schema.providerVersion}; `
    + `${stats.references} references resolved; ${stats.lambdaChecks} Lambda handler/artifact checks; `
    + `${errors.length} error(s)`);
  process.exitCode = errors.length ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
