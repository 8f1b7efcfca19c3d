// Mutual TLS on the index-service's Kafka listener (docs/kafka.md "Client certificates", ADR 0055), as far as it can
// be checked without terraform: the three variables and their defaults, their validations (the PEM and subject
// patterns are run here on good and bad values), the task definition's preconditions, the environment they become,
// the pass-through of examples/complete, and that tests/kafka.tftest.hcl holds the plans that must pass and fail.
// terraform evaluates those plans (`terraform test` in modules/index-service); CI has no terraform binary.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "@cdktn/hcl2json";

const here = dirname(fileURLToPath(import.meta.url));
const terraform = join(here, "..", "..");
const moduleDir = join(terraform, "modules", "index-service");
const exampleDir = join(terraform, "examples", "complete");

async function load(dir, file) {
  const path = join(dir, file);
  return parse(path, readFileSync(path, "utf8"));
}
const one = (blocks) => (assert.equal(blocks?.length, 1), blocks[0]);

const MTLS_VARIABLES = {
  kafka_client_auth: ["${string}", "none"],
  kafka_client_ca_pem: ["${string}", null],
  kafka_client_certificate_scopes: ["${map(string)}", {}],
};

const PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n";

/** The first regex("...") literal in a Terraform condition, as a JavaScript RegExp (the patterns used are RE2 and JS alike). */
function regexIn(condition) {
  const m = condition.match(/regex\("((?:[^"\\]|\\.)*)"/);
  assert.ok(m, `no regex("...") in ${condition}`);
  return new RegExp(JSON.parse(`"${m[1]}"`));
}

test("index-service declares the client-certificate variables: client auth none, no CA, no subjects by default", async () => {
  const { variable } = await load(moduleDir, "variables.tf");
  for (const [name, [type, defaultValue]] of Object.entries(MTLS_VARIABLES)) {
    const v = one(variable[name]);
    assert.equal(v.type, type, `${name}: type`);
    assert.ok("default" in v, `${name} is optional`);
    assert.deepEqual(v.default, defaultValue, `${name}: default`);
    assert.ok(v.validation?.length, `${name} has a validation`);
  }
  const auth = variable.kafka_client_auth[0].validation.map((v) => v.condition).join("\n");
  for (const value of ["none", "requested", "required"]) assert.match(auth, new RegExp(`"${value}"`), `kafka_client_auth allows ${value}`);
  assert.match(auth, /var\.kafka_client_auth/);
});

test("the CA must look like a PEM certificate", async () => {
  const { variable } = await load(moduleDir, "variables.tf");
  const [validation] = variable.kafka_client_ca_pem[0].validation;
  assert.match(validation.condition, /var\.kafka_client_ca_pem == null \|\|/, "null (no CA) passes");
  const pem = regexIn(validation.condition);
  assert.ok(pem.test(PEM), "a PEM certificate passes");
  assert.ok(pem.test(PEM + PEM.replace("Q2xp", "U2Vj")), "a bundle of two passes");
  for (const bad of ["", "MIIBszCCAVmgAwIBAgIU", "-----BEGIN CERTIFICATE-----\n", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/ca-AbCdEf", "/etc/tierlog/client-ca.pem"]) {
    assert.ok(!pem.test(bad), `not a PEM certificate: ${JSON.stringify(bad)}`);
  }
  assert.match(validation.error_message, /kafka_client_ca_pem/);
  assert.match(validation.error_message, /BEGIN CERTIFICATE/);
});

test("each subject looks like a distinguished name and each has scopes", async () => {
  const { variable } = await load(moduleDir, "variables.tf");
  const conditions = variable.kafka_client_certificate_scopes[0].validation.map((v) => v.condition);
  assert.ok(conditions.some((c) => /for \w+, \w+ in var\.kafka_client_certificate_scopes/.test(c) && /strcontains\(\w+, "="\)/.test(c)), `subjects contain "=": ${conditions}`);
  assert.ok(conditions.some((c) => /trimspace\(\w+\) != ""/.test(c)), `scopes are not blank: ${conditions}`);
  for (const v of variable.kafka_client_certificate_scopes[0].validation) assert.match(v.error_message, /kafka_client_certificate_scopes/);
});

test("the task definition refuses client auth without the TLS listener or a CA, and subjects while client auth is none", async () => {
  const doc = await load(moduleDir, "main.tf");
  const preconditions = one(one(doc.resource.aws_ecs_task_definition.this).lifecycle).precondition;
  const find = (re, what) => {
    const p = preconditions.find((x) => re.test(x.condition));
    assert.ok(p, `a precondition on ${what}:\n${preconditions.map((x) => x.condition).join("\n")}`);
    return p;
  };
  const listener = find(/var\.kafka_client_auth == "none" \|\| \(var\.kafka_enabled && var\.kafka_tls_keystore_secret_arn != null\)/, "the TLS listener");
  assert.match(listener.error_message, /kafka_enabled/);
  assert.match(listener.error_message, /kafka_tls_keystore_secret_arn/);
  assert.match(listener.error_message, /kafka_allow_plaintext/);
  const ca = find(/var\.kafka_client_auth == "none" \|\| var\.kafka_client_ca_pem != null/, "the CA");
  assert.match(ca.error_message, /kafka_client_ca_pem/);
  const scopes = find(/var\.kafka_client_auth != "none" \|\| length\(var\.kafka_client_certificate_scopes\) == 0/, "subjects with client auth none");
  assert.match(scopes.error_message, /kafka_client_certificate_scopes/);
  assert.match(scopes.error_message, /grant nothing/);
});

test("client auth, the CA and the subjects' scopes reach the service as plain environment only with the listener on and client auth set", async () => {
  const doc = await load(moduleDir, "main.tf");
  const l = Object.assign({}, ...doc.locals);
  assert.equal(l.kafka_client_auth, '${var.kafka_enabled && var.kafka_client_auth != "none"}');
  assert.match(l.kafka_environment, /local\.kafka_client_auth \? \{/);
  assert.match(l.kafka_environment, /TIERLOG_KAFKA_TLS_CLIENT_AUTH += var\.kafka_client_auth/);
  assert.match(l.kafka_environment, /TIERLOG_KAFKA_TLS_CLIENT_CA_PEM += var\.kafka_client_ca_pem/);
  assert.match(l.kafka_environment, /TIERLOG_KAFKA_TLS_CLIENT_SCOPES_JSON = jsonencode\(var\.kafka_client_certificate_scopes\)/);
  assert.doesNotMatch(JSON.stringify(l.kafka_secrets), /CLIENT/, "the CA and scopes are not secrets");
});

test("examples/complete passes the client-certificate variables through with the same types and defaults", async () => {
  const { variable } = await load(exampleDir, "variables.tf");
  const call = one((await load(exampleDir, "main.tf")).module.index_service);
  for (const [name, [type, defaultValue]] of Object.entries(MTLS_VARIABLES)) {
    assert.ok(variable[name], `examples/complete declares ${name}`);
    assert.equal(variable[name][0].type, type, `${name}: type`);
    assert.deepEqual(variable[name][0].default, defaultValue, `${name}: default`);
    assert.equal(call[name], `\${var.${name}}`, `module "index_service" gets ${name} = var.${name}`);
  }
});

test("tests/kafka.tftest.hcl plans mutual TLS that must pass and mistakes that must fail", () => {
  const hcl = readFileSync(join(moduleDir, "tests", "kafka.tftest.hcl"), "utf8");
  const runs = Object.fromEntries([...hcl.matchAll(/^run "([a-z0-9_]+)" \{\n([\s\S]*?)^\}/gm)].map((m) => [m[1], m[2]]));
  const passing = runs.kafka_with_client_certificates;
  assert.ok(passing, "run kafka_with_client_certificates");
  for (const env of ["TIERLOG_KAFKA_TLS_CLIENT_AUTH", "TIERLOG_KAFKA_TLS_CLIENT_CA_PEM", "TIERLOG_KAFKA_TLS_CLIENT_SCOPES_JSON"]) assert.match(passing, new RegExp(env));
  assert.doesNotMatch(passing, /expect_failures/);
  const failing = {
    client_auth_is_none_requested_or_required: "var.kafka_client_auth",
    client_auth_needs_kafka_enabled: "aws_ecs_task_definition.this",
    client_auth_needs_the_tls_keystore: "aws_ecs_task_definition.this",
    client_auth_needs_a_ca: "aws_ecs_task_definition.this",
    client_ca_is_a_pem_certificate: "var.kafka_client_ca_pem",
    certificate_scopes_need_client_auth: "aws_ecs_task_definition.this",
    certificate_subjects_are_distinguished_names: "var.kafka_client_certificate_scopes",
    certificate_scopes_are_not_empty: "var.kafka_client_certificate_scopes",
  };
  for (const [name, target] of Object.entries(failing)) {
    assert.ok(runs[name], `run ${name}`);
    assert.match(runs[name], /command = plan/, `${name} is a plan`);
    assert.ok(runs[name].includes(`expect_failures = [${target}]`), `${name} expects ${target} to fail`);
  }
});
