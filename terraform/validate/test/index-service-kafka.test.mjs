// The index-service module's Kafka listener, as far as it can be checked without terraform: its variables and their
// secure defaults, the pass-through of examples/complete, the shape of the resources it adds only with
// kafka_enabled, and that validate.mjs checks those resources against the AWS provider schema. What terraform
// evaluates (conditions, counts, the container definition) is tested by modules/index-service/tests/*.tftest.hcl.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "@cdktn/hcl2json";
import { loadSchema, validate } from "../validate.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, "..", "..", "..");
const terraform = join(repoRoot, "terraform");
const moduleDir = join(terraform, "modules", "index-service");
const exampleDir = join(terraform, "examples", "complete");

async function load(dir, file) {
  const path = join(dir, file);
  return parse(path, readFileSync(path, "utf8"));
}
const one = (blocks) => (assert.equal(blocks?.length, 1), blocks[0]);
const locals = (doc) => Object.assign({}, ...(doc.locals ?? []));

// name -> [type, default]: the brief's interface, secure by default (nothing opened, no plaintext).
const KAFKA_VARIABLES = {
  kafka_enabled: ["${bool}", false],
  kafka_port: ["${number}", 9092],
  kafka_client_cidr_blocks: ["${list(string)}", []],
  kafka_client_security_group_ids: ["${list(string)}", []],
  kafka_tls_keystore_secret_arn: ["${string}", null],
  kafka_tls_keystore_password_secret_arn: ["${string}", null],
  kafka_allow_plaintext: ["${bool}", false],
};

test("index-service declares the Kafka variables, off and closed by default", async () => {
  const { variable } = await load(moduleDir, "variables.tf");
  for (const [name, [type, defaultValue]] of Object.entries(KAFKA_VARIABLES)) {
    const v = one(variable[name]);
    assert.equal(v.type, type, `${name}: type`);
    assert.ok("default" in v, `${name} has a default (optional)`);
    assert.deepEqual(v.default, defaultValue, `${name}: default`);
  }
  // Formats are validated: a CIDR, an sg- id, a whole-secret ARN; the port is not the HTTP port; the TLS pair together.
  for (const name of ["kafka_port", "kafka_client_cidr_blocks", "kafka_client_security_group_ids", "kafka_tls_keystore_secret_arn"]) {
    assert.ok(variable[name][0].validation?.length, `${name} has a validation`);
  }
  assert.match(variable.kafka_port[0].validation[0].condition, /!= 8080/);
  assert.ok(variable.kafka_tls_keystore_password_secret_arn[0].validation
    .some((v) => /var\.kafka_tls_keystore_secret_arn == null/.test(v.condition)), "keystore and password are set together");
});

test("examples/complete passes every Kafka variable through with the same type and default, and outputs kafka_bootstrap_servers", async () => {
  const { variable } = await load(exampleDir, "variables.tf");
  const call = one((await load(exampleDir, "main.tf")).module.index_service);
  for (const [name, [type, defaultValue]] of Object.entries(KAFKA_VARIABLES)) {
    assert.ok(variable[name], `examples/complete declares ${name}`);
    assert.equal(variable[name][0].type, type, `${name}: type`);
    assert.deepEqual(variable[name][0].default, defaultValue, `${name}: default`);
    assert.equal(call[name], `\${var.${name}}`, `module "index_service" gets ${name} = var.${name}`);
  }
  const moduleOutputs = (await load(moduleDir, "outputs.tf")).output;
  assert.match(one(moduleOutputs.kafka_bootstrap_servers).value, /aws_lb\.kafka\[0\]\.dns_name\}:\$\{var\.kafka_port\}/);
  assert.match(one(moduleOutputs.kafka_bootstrap_servers).value, /^\$\{var\.kafka_enabled \?.*: null\}$/);
  const exampleOutputs = (await load(exampleDir, "outputs.tf")).output;
  assert.equal(one(exampleOutputs.kafka_bootstrap_servers).value, "${module.index_service.kafka_bootstrap_servers}");
});

test("the Kafka resources exist only with kafka_enabled: an internal NLB (TCP, ip targets, TCP health check) and rules for the named clients", async () => {
  const doc = await load(moduleDir, "main.tf");
  const r = doc.resource;
  const kafkaResources = [
    ["aws_lb", "kafka"], ["aws_lb_target_group", "kafka"], ["aws_lb_listener", "kafka"], ["aws_security_group", "kafka_lb"],
    ["aws_vpc_security_group_egress_rule", "kafka_lb_to_task"], ["aws_vpc_security_group_ingress_rule", "task_kafka_from_lb"],
    ["aws_vpc_security_group_ingress_rule", "task_kafka_from_cidr"], ["aws_vpc_security_group_ingress_rule", "task_kafka_from_sg"],
    ["aws_vpc_security_group_ingress_rule", "kafka_lb_from_cidr"], ["aws_vpc_security_group_ingress_rule", "kafka_lb_from_sg"],
  ];
  for (const [type, name] of kafkaResources) {
    assert.match(one(r[type]?.[name]).count ?? "", /^\$\{var\.kafka_enabled \? /, `${type}.${name} is counted on var.kafka_enabled`);
  }
  const lb = one(r.aws_lb.kafka);
  assert.equal(lb.load_balancer_type, "network");
  assert.equal(lb.internal, true);
  assert.deepEqual(lb.security_groups, ["${aws_security_group.kafka_lb[0].id}"]);
  const tg = one(r.aws_lb_target_group.kafka);
  assert.equal(tg.protocol, "TCP");
  assert.equal(tg.target_type, "ip");
  assert.equal(tg.port, "${var.kafka_port}");
  assert.equal(one(tg.health_check).protocol, "TCP");
  assert.ok(tg.deregistration_delay <= 30, "a small deregistration delay");
  const listener = one(r.aws_lb_listener.kafka);
  assert.equal(listener.protocol, "TCP", "TLS passes through to the tasks");
  assert.equal(listener.port, "${var.kafka_port}");

  // Clients: from the variables on the tasks and on the NLB; the NLB's group on the tasks; never 0.0.0.0/0.
  for (const name of ["task_kafka_from_cidr", "kafka_lb_from_cidr"]) {
    assert.equal(one(r.aws_vpc_security_group_ingress_rule[name]).cidr_ipv4, "${var.kafka_client_cidr_blocks[count.index]}");
  }
  for (const name of ["task_kafka_from_sg", "kafka_lb_from_sg"]) {
    assert.equal(one(r.aws_vpc_security_group_ingress_rule[name]).referenced_security_group_id, "${var.kafka_client_security_group_ids[count.index]}");
  }
  assert.equal(one(r.aws_vpc_security_group_ingress_rule.task_kafka_from_lb).referenced_security_group_id, "${aws_security_group.kafka_lb[0].id}");
  for (const [name, [rule]] of Object.entries(r.aws_vpc_security_group_ingress_rule)) {
    assert.notEqual(rule.cidr_ipv4, "0.0.0.0/0", `ingress ${name} is open to everyone`);
  }

  // The ECS service registers in the Kafka target group through a dynamic second load_balancer block.
  const dyn = one(one(r.aws_ecs_service.this).dynamic?.load_balancer);
  assert.equal(dyn.for_each, "${aws_lb_target_group.kafka}");
  assert.equal(one(dyn.content).container_port, "${var.kafka_port}");

  // The task definition refuses Kafka without clients, and without TLS unless plaintext is allowed.
  const conditions = one(one(r.aws_ecs_task_definition.this).lifecycle).precondition.map((p) => p.condition);
  assert.ok(conditions.some((c) => /kafka_client_cidr_blocks/.test(c) && /kafka_client_security_group_ids/.test(c)), "a precondition on the clients");
  assert.ok(conditions.some((c) => /kafka_tls_keystore_secret_arn != null/.test(c) && /kafka_allow_plaintext/.test(c)), "a precondition on TLS");
});

test("the keystore and its password are ECS secrets read by the execution role, never plain environment", async () => {
  const doc = await load(moduleDir, "main.tf");
  const l = locals(doc);
  assert.match(l.kafka_environment, /TIERLOG_KAFKA_ENABLED = tostring\(var\.kafka_enabled\)/);
  assert.match(l.kafka_environment, /TIERLOG_KAFKA_HOST = "0\.0\.0\.0"/);
  assert.match(l.kafka_environment, /TIERLOG_KAFKA_PORT = tostring\(var\.kafka_port\)/);
  for (const [name, value] of Object.entries(l)) {
    if (name !== "kafka_secrets") assert.doesNotMatch(JSON.stringify(value), /TLS_KEYSTORE/, `local.${name} names a keystore variable`);
  }
  assert.match(l.kafka_secrets, /name = "TIERLOG_KAFKA_TLS_KEYSTORE_BASE64", valueFrom = var\.kafka_tls_keystore_secret_arn/);
  assert.match(l.kafka_secrets, /name = "TIERLOG_KAFKA_TLS_KEYSTORE_PASSWORD", valueFrom = var\.kafka_tls_keystore_password_secret_arn/);
  const containers = one(doc.resource.aws_ecs_task_definition.this).container_definitions;
  assert.match(containers, /secrets += concat\(\[\{ name = "TIERLOG_AUTH_BOOTSTRAP_TOKEN"[^\n]*local\.kafka_secrets\)/);
  assert.match(containers, /portMappings = concat\([^\n]*local\.kafka_port_mappings\)/);
  assert.match(containers, /merge\(local\.environment, local\.jwt_environment, local\.kafka_environment\)/);

  const policy = one(doc.data.aws_iam_policy_document.execution_secrets);
  const statement = one(policy.dynamic?.statement);
  assert.equal(statement.for_each, "${local.kafka_tls ? [[var.kafka_tls_keystore_secret_arn, var.kafka_tls_keystore_password_secret_arn]] : []}");
  assert.deepEqual(one(statement.content).actions, ["secretsmanager:GetSecretValue"]);
  assert.equal(one(statement.content).resources, "${statement.value}");
});

test("the arguments the Kafka resources use exist in the AWS provider schema the harness checks against", () => {
  const schema = loadSchema();
  const used = {
    aws_lb: ["internal", "load_balancer_type", "security_groups", "subnets", "enable_cross_zone_load_balancing"],
    aws_lb_target_group: ["port", "protocol", "target_type", "vpc_id", "deregistration_delay", "connection_termination", "preserve_client_ip"],
    aws_lb_listener: ["load_balancer_arn", "port", "protocol", "tcp_idle_timeout_seconds"],
    aws_vpc_security_group_ingress_rule: ["security_group_id", "ip_protocol", "from_port", "to_port", "cidr_ipv4", "referenced_security_group_id"],
    aws_vpc_security_group_egress_rule: ["security_group_id", "ip_protocol", "from_port", "to_port", "referenced_security_group_id"],
  };
  for (const [type, args] of Object.entries(used)) for (const a of args) assert.ok(schema.resource[type].a.includes(a), `${type}.${a}`);
  assert.ok(schema.resource.aws_lb_target_group.b.health_check.a.includes("protocol"));
  assert.ok(schema.resource.aws_ecs_service.b.load_balancer.a.includes("container_port"));
});

test("a misspelled argument in the Kafka resources fails validation, also inside the service's dynamic load_balancer", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tf-validate-kafka-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(terraform, join(dir, "terraform"), { recursive: true, filter: (src) => !src.includes("node_modules") && !src.endsWith(join("terraform", "validate")) });
  cpSync(join(repoRoot, "ingest-function"), join(dir, "ingest-function"), { recursive: true, filter: (src) => !src.includes(join("ingest-function", "target")) });
  const main = join(dir, "terraform", "modules", "index-service", "main.tf");
  const original = readFileSync(main, "utf8");
  const broken = original
    .replace("tcp_idle_timeout_seconds = 600", "idle_timeout_seconds = 600")
    .replace("      container_port   = var.kafka_port\n", "      container_prot   = var.kafka_port\n");
  assert.notEqual(broken, original);
  writeFileSync(main, broken);
  const { errors } = await validate({ root: join(dir, "terraform"), repo: dir, skipDirs: [] });
  assert.equal(errors.length, 3, errors.join("\n"));
  assert.ok(errors.some((e) => /aws_lb_listener\.kafka: unsupported argument or block "idle_timeout_seconds"/.test(e)), errors.join("\n"));
  assert.ok(errors.some((e) => /aws_ecs_service\.this\.load_balancer: unsupported argument or block "container_prot"/.test(e)), errors.join("\n"));
  assert.ok(errors.some((e) => /aws_ecs_service\.this\.load_balancer: required argument or block "container_port" is missing/.test(e)), errors.join("\n"));
});
