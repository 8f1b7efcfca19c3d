// Fixture tests of validate.mjs: the good fixture passes; each broken fixture fails with exactly the
// errors its mistakes deserve; the repository's own Terraform passes once the Java handler exists.
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { validate } from "../validate.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, "..", "fixtures");
const fixture = (name) => ({ root: join(fixtures, name), repo: join(fixtures, name), skipDirs: [] });

/** Every expected pattern matches some error and every error is expected. */
function assertErrors(errors, expected) {
  for (const pattern of expected) assert.ok(errors.some((e) => pattern.test(e)), `no error matches ${pattern}:\n${errors.join("\n")}`);
  for (const e of errors) assert.ok(expected.some((p) => p.test(e)), `unexpected error: ${e}`);
}

test("the good fixture passes", async () => {
  const { errors, stats } = await validate({ root: join(fixtures, "good", "terraform"), repo: join(fixtures, "good"), skipDirs: [] });
  assert.deepEqual(errors, []);
  assert.equal(stats.lambdaChecks, 1);
  assert.ok(stats.arguments > 10);
});

test("an unknown resource or data source type fails", async () => {
  const { errors } = await validate(fixture("bad-type"));
  assertErrors(errors, [/unknown resource type "aws_s3_buckett"/, /unknown data source type "aws_iam_policy_documents"/]);
});

test("unknown arguments, nested arguments and dynamic blocks fail", async () => {
  const { errors } = await validate(fixture("bad-argument"));
  assertErrors(errors, [
    /aws_s3_bucket\.this: unsupported argument or block "bucket_name"/,
    /rule\.abort_incomplete_multipart_upload: unsupported argument or block "days"/,
    /unknown dynamic block "rules"/,
  ]);
});

test("unresolved var, local, module and resource references fail", async () => {
  const { errors } = await validate(fixture("bad-reference"));
  assertErrors(errors, [/undeclared variable var\.missing/, /undeclared local value local\.unknown/,
    /undeclared resource aws_iam_role\.nope/, /undeclared module module\.absent/]);
});

test("an HCL syntax error fails", async () => {
  const { errors } = await validate(fixture("bad-syntax"));
  assertErrors(errors, [/main\.tf: HCL parse error: .*Invalid expression/]);
});

test("bad module calls and module style fail", async () => {
  const { errors } = await validate(fixture("bad-module-call"));
  assertErrors(errors, [/has no variable "bucketz"/, /required variable "bucket" is not set/, /module\.m \(modules\/m\) has no output "arn"/,
    /provider blocks belong in roots/, /variable "untyped" has no type/]);
});

test("a handler method, handler class or artifact name that the Java build lacks fails", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tf-validate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(fixtures, "good"), dir, { recursive: true });
  const java = join(dir, "handler", "src", "main", "java", "example", "fixture", "Handler.java");
  const pom = join(dir, "handler", "pom.xml");
  writeFileSync(java, readFileSync(java, "utf8").replace("public String handle(", "String handle("));
  writeFileSync(pom, readFileSync(pom, "utf8").replace("fixture-handler", "other-name"));
  let { errors } = await validate({ root: join(dir, "terraform"), repo: dir, skipDirs: [] });
  assertErrors(errors, [/Handler has no public method handle/, /handler\/pom\.xml does not produce fixture-handler\.jar/]);

  rmSync(java);
  ({ errors } = await validate({ root: join(dir, "terraform"), repo: dir, skipDirs: [] }));
  assertErrors(errors, [/handler class example\.fixture\.Handler not found: no handler\/src\/main\/java\/example\/fixture\/Handler\.java/,
    /handler\/pom\.xml does not produce/]);
});

test("a moved block must go from an address no longer declared to a declared resource", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tf-validate-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(fixtures, "good"), dir, { recursive: true });
  const main = join(dir, "terraform", "modules", "fn", "main.tf");
  const original = readFileSync(main, "utf8");
  writeFileSync(main, original + '\nmoved {\n  from = aws_iam_role.old_name\n  to   = aws_iam_role.this\n}\n');
  let { errors } = await validate({ root: join(dir, "terraform"), repo: dir, skipDirs: [] });
  assert.deepEqual(errors, []);

  writeFileSync(main, original + '\nmoved {\n  from = aws_iam_role.this\n  to   = aws_iam_role.renamed["a"]\n}\n');
  ({ errors } = await validate({ root: join(dir, "terraform"), repo: dir, skipDirs: [] }));
  assertErrors(errors, [/moved to undeclared resource aws_iam_role\.renamed/, /moved from aws_iam_role\.this, which is still declared/]);
});

const repoRoot = join(here, "..", "..", "..");
const handlerSource = join(repoRoot, "ingest-function", "src", "main", "java", "io", "tierlog", "ingest", "function", "ApiGatewayIngestHandler.java");
test("the repository's Terraform passes", { skip: existsSync(handlerSource) ? false : "ingest-function's handler source is not there yet" }, async () => {
  const { errors, stats } = await validate({ root: join(repoRoot, "terraform"), repo: repoRoot });
  assert.deepEqual(errors, []);
  assert.ok(stats.resources > 50);
});
