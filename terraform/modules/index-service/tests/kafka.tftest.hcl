# The Kafka listener's wiring, without AWS: `terraform init && terraform test` in modules/index-service (needs the
# terraform binary and the hashicorp/aws provider; the mocked provider makes no AWS call and needs no credentials).
# CI does not run it (no terraform binary there, docs/adr/0006); terraform/validate checks the same files offline.

mock_provider "aws" {
  # The roles' policy arguments are validated as JSON even when mocked.
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
  # Mocked ARNs that other resources pass to ARN-validated arguments.
  mock_resource "aws_iam_role" {
    defaults = { arn = "arn:aws:iam::123456789012:role/mock" }
  }
  mock_resource "aws_lb" {
    defaults = { arn = "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/net/mock/0123456789abcdef" }
  }
  mock_resource "aws_lb_target_group" {
    defaults = { arn = "arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/mock/0123456789abcdef" }
  }
  mock_resource "aws_secretsmanager_secret" {
    defaults = { arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:mock-AbCdEf" }
  }
  mock_resource "aws_ecs_task_definition" {
    defaults = { arn = "arn:aws:ecs:eu-west-1:123456789012:task-definition/mock:1" }
  }
}

variables {
  name                 = "tierlog-index"
  container_image      = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/tierlog-index-service:test"
  vpc_id               = "vpc-0123456789abcdef0"
  subnet_ids           = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
  efs_file_system_id   = "fs-0123456789abcdef0"
  efs_file_system_arn  = "arn:aws:elasticfilesystem:eu-west-1:123456789012:file-system/fs-0123456789abcdef0"
  efs_access_point_id  = "fsap-0123456789abcdef0"
  efs_access_point_arn = "arn:aws:elasticfilesystem:eu-west-1:123456789012:access-point/fsap-0123456789abcdef0"
  cold_bucket_name     = "tierlog-cold"
  cold_bucket_arn      = "arn:aws:s3:::tierlog-cold"
}

run "kafka_is_off_by_default" {
  command = apply

  assert {
    condition     = contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment, { name = "TIERLOG_KAFKA_ENABLED", value = "false" })
    error_message = "Without kafka_enabled the service must be told not to open a Kafka port."
  }
  assert {
    condition     = length([for e in jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment : e if startswith(e.name, "TIERLOG_KAFKA_") && e.name != "TIERLOG_KAFKA_ENABLED"]) == 0
    error_message = "No other Kafka setting without kafka_enabled."
  }
  assert {
    condition     = jsondecode(aws_ecs_task_definition.this.container_definitions)[0].portMappings == [{ containerPort = 8080, protocol = "tcp" }]
    error_message = "Only the HTTP port is mapped without kafka_enabled."
  }
  assert {
    condition     = length(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].secrets) == 1
    error_message = "Only the bootstrap token is injected without kafka_enabled."
  }
  assert {
    condition     = length(aws_lb.kafka) + length(aws_lb_target_group.kafka) + length(aws_lb_listener.kafka) + length(aws_security_group.kafka_lb) == 0
    error_message = "No Kafka load balancer without kafka_enabled."
  }
  assert {
    condition     = length(aws_vpc_security_group_ingress_rule.task_kafka_from_cidr) + length(aws_vpc_security_group_ingress_rule.task_kafka_from_sg) + length(aws_vpc_security_group_ingress_rule.task_kafka_from_lb) == 0
    error_message = "No Kafka ingress on the tasks without kafka_enabled."
  }
  assert {
    condition     = length(aws_ecs_service.this.load_balancer) == 1
    error_message = "Only the ALB's target group without kafka_enabled."
  }
  assert {
    condition     = output.kafka_bootstrap_servers == null && output.kafka_lb_security_group_id == null
    error_message = "kafka_bootstrap_servers is null without kafka_enabled."
  }
  assert {
    condition     = length([for s in data.aws_iam_policy_document.execution_secrets.statement : s if s.sid == "KafkaTlsKeystore"]) == 0
    error_message = "The execution role reads no Kafka secret without kafka_enabled."
  }
}

run "kafka_with_tls" {
  command = apply

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16", "10.50.0.0/16"]
    kafka_client_security_group_ids        = ["sg-0aaaaaaaaaaaaaaaa"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
  }

  override_resource {
    target = aws_lb.kafka
    values = {
      arn      = "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/net/tierlog-index-kafka/0123456789abcdef"
      dns_name = "tierlog-index-kafka-0123456789abcdef.elb.eu-west-1.amazonaws.com"
    }
  }

  assert {
    condition = alltrue([for e in [
      { name = "TIERLOG_KAFKA_ENABLED", value = "true" },
      { name = "TIERLOG_KAFKA_HOST", value = "0.0.0.0" },
      { name = "TIERLOG_KAFKA_PORT", value = "9092" },
      { name = "TIERLOG_AUTH_MODE", value = "token" },
    ] : contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment, e)])
    error_message = "The service binds 0.0.0.0:9092, token auth."
  }
  assert {
    condition     = length([for e in jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment : e if startswith(e.name, "TIERLOG_KAFKA_TLS")]) == 0
    error_message = "The keystore and its password are never plain environment."
  }
  assert {
    condition     = contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].secrets, { name = "TIERLOG_KAFKA_TLS_KEYSTORE_BASE64", valueFrom = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf" })
    error_message = "The keystore is injected from its secret."
  }
  assert {
    condition     = contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].secrets, { name = "TIERLOG_KAFKA_TLS_KEYSTORE_PASSWORD", valueFrom = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl" })
    error_message = "The keystore password is injected from its secret."
  }
  assert {
    condition     = contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].portMappings, { containerPort = 9092, protocol = "tcp" })
    error_message = "The Kafka port is mapped."
  }
  assert {
    condition = [for s in data.aws_iam_policy_document.execution_secrets.statement : sort(tolist(s.resources)) if s.sid == "KafkaTlsKeystore"] == [sort([
      "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf",
      "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl",
    ])]
    error_message = "The execution role may read exactly the two Kafka secrets."
  }
  assert {
    condition     = aws_lb.kafka[0].load_balancer_type == "network" && aws_lb.kafka[0].internal && aws_lb.kafka[0].name == "tierlog-index-kafka"
    error_message = "An internal NLB."
  }
  assert {
    condition     = aws_lb_target_group.kafka[0].protocol == "TCP" && aws_lb_target_group.kafka[0].target_type == "ip" && aws_lb_target_group.kafka[0].port == 9092 && aws_lb_target_group.kafka[0].health_check[0].protocol == "TCP"
    error_message = "A TCP target group of IPs, TCP health check."
  }
  assert {
    condition     = aws_lb_listener.kafka[0].protocol == "TCP" && aws_lb_listener.kafka[0].port == 9092
    error_message = "A TCP listener on the Kafka port (TLS passes through to the tasks)."
  }
  assert {
    condition     = [for r in aws_vpc_security_group_ingress_rule.task_kafka_from_cidr : r.cidr_ipv4 if r.from_port == 9092 && r.to_port == 9092] == ["10.40.0.0/16", "10.50.0.0/16"]
    error_message = "The tasks admit each client CIDR on the Kafka port."
  }
  assert {
    condition     = [for r in aws_vpc_security_group_ingress_rule.kafka_lb_from_cidr : r.cidr_ipv4 if r.from_port == 9092] == ["10.40.0.0/16", "10.50.0.0/16"]
    error_message = "The NLB admits each client CIDR on the Kafka port."
  }
  assert {
    condition     = [for r in concat(aws_vpc_security_group_ingress_rule.task_kafka_from_sg, aws_vpc_security_group_ingress_rule.kafka_lb_from_sg) : r.referenced_security_group_id if r.from_port == 9092] == ["sg-0aaaaaaaaaaaaaaaa", "sg-0aaaaaaaaaaaaaaaa"]
    error_message = "The tasks and the NLB admit each client security group on the Kafka port."
  }
  assert {
    condition     = aws_vpc_security_group_ingress_rule.task_kafka_from_lb[0].referenced_security_group_id == aws_security_group.kafka_lb[0].id && aws_vpc_security_group_ingress_rule.task_kafka_from_lb[0].from_port == 9092
    error_message = "The tasks admit the NLB's security group on the Kafka port."
  }
  assert {
    condition     = length([for r in concat(aws_vpc_security_group_ingress_rule.task_kafka_from_cidr, aws_vpc_security_group_ingress_rule.kafka_lb_from_cidr) : r if r.cidr_ipv4 == "0.0.0.0/0"]) == 0
    error_message = "Never open to everyone."
  }
  assert {
    condition     = length(aws_ecs_service.this.load_balancer) == 2 && contains([for lb in aws_ecs_service.this.load_balancer : lb.container_port], 9092)
    error_message = "The service registers its tasks in the Kafka target group too."
  }
  assert {
    condition     = output.kafka_bootstrap_servers == "tierlog-index-kafka-0123456789abcdef.elb.eu-west-1.amazonaws.com:9092"
    error_message = "kafka_bootstrap_servers is <NLB DNS name>:<port>."
  }
}

run "kafka_plaintext_only_when_allowed" {
  command = apply

  variables {
    kafka_enabled            = true
    kafka_port               = 19092
    kafka_client_cidr_blocks = ["10.40.0.0/16"]
    kafka_allow_plaintext    = true
  }

  assert {
    condition     = contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment, { name = "TIERLOG_KAFKA_PORT", value = "19092" })
    error_message = "TIERLOG_KAFKA_PORT follows kafka_port."
  }
  assert {
    condition     = length(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].secrets) == 1
    error_message = "No keystore secrets without a keystore."
  }
  assert {
    condition     = length([for s in data.aws_iam_policy_document.execution_secrets.statement : s if s.sid == "KafkaTlsKeystore"]) == 0
    error_message = "No Kafka secret permission without a keystore."
  }
  assert {
    condition     = aws_lb_listener.kafka[0].port == 19092 && aws_lb_target_group.kafka[0].port == 19092 && aws_vpc_security_group_ingress_rule.task_kafka_from_cidr[0].from_port == 19092
    error_message = "Listener, target group and rules follow kafka_port."
  }
}

run "kafka_needs_clients" {
  command = plan

  variables {
    kafka_enabled         = true
    kafka_allow_plaintext = true
  }

  expect_failures = [aws_ecs_task_definition.this]
}

run "kafka_needs_tls_or_plaintext_opt_in" {
  command = plan

  variables {
    kafka_enabled            = true
    kafka_client_cidr_blocks = ["10.40.0.0/16"]
  }

  expect_failures = [aws_ecs_task_definition.this]
}

run "keystore_needs_its_password" {
  command = plan

  variables {
    kafka_enabled                 = true
    kafka_client_cidr_blocks      = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
  }

  expect_failures = [var.kafka_tls_keystore_password_secret_arn]
}

run "password_needs_its_keystore" {
  command = plan

  variables {
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
  }

  expect_failures = [var.kafka_tls_keystore_password_secret_arn]
}

run "kafka_port_is_not_the_http_port" {
  command = plan

  variables {
    kafka_port = 8080
  }

  expect_failures = [var.kafka_port]
}

run "client_cidrs_are_ipv4_networks" {
  command = plan

  variables {
    kafka_client_cidr_blocks = ["10.40.0.1/16"]
  }

  expect_failures = [var.kafka_client_cidr_blocks]
}

run "client_security_groups_are_ids" {
  command = plan

  variables {
    kafka_client_security_group_ids = ["my-clients"]
  }

  expect_failures = [var.kafka_client_security_group_ids]
}

run "keystore_secret_is_a_whole_secret_arn" {
  command = plan

  variables {
    kafka_tls_keystore_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-AbCdEf:keystore::"
  }

  expect_failures = [var.kafka_tls_keystore_secret_arn]
}

# Client certificates (docs/kafka.md "Client certificates", ADR 0055): client auth, the CA and the subjects' scopes
# are plain environment of the service, set only with the TLS listener on and client auth other than none.
run "kafka_with_client_certificates" {
  command = apply

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
    kafka_client_auth                      = "required"
    kafka_client_ca_pem                    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n"
    kafka_client_certificate_scopes = {
      "CN=orders-app,O=Acme"  = "produce:topic:orders* fetch:topic:orders*"
      "CN=billing,OU=Finance" = "fetch:topic:orders*"
    }
  }

  assert {
    condition     = contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment, { name = "TIERLOG_KAFKA_TLS_CLIENT_AUTH", value = "required" })
    error_message = "TIERLOG_KAFKA_TLS_CLIENT_AUTH follows kafka_client_auth."
  }
  assert {
    condition     = contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment, { name = "TIERLOG_KAFKA_TLS_CLIENT_CA_PEM", value = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n" })
    error_message = "TIERLOG_KAFKA_TLS_CLIENT_CA_PEM is the CA's PEM text as given."
  }
  assert {
    condition = [for e in jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment : jsondecode(e.value) if e.name == "TIERLOG_KAFKA_TLS_CLIENT_SCOPES_JSON"] == [{
      "CN=orders-app,O=Acme"  = "produce:topic:orders* fetch:topic:orders*"
      "CN=billing,OU=Finance" = "fetch:topic:orders*"
    }]
    error_message = "TIERLOG_KAFKA_TLS_CLIENT_SCOPES_JSON is the subject-to-scopes map as a JSON object."
  }
  assert {
    condition     = length([for s in jsondecode(aws_ecs_task_definition.this.container_definitions)[0].secrets : s if strcontains(s.name, "CLIENT")]) == 0
    error_message = "The CA and the scopes are configuration, not secrets."
  }
}

run "kafka_client_auth_requested_without_subjects" {
  command = apply

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
    kafka_client_auth                      = "requested"
    kafka_client_ca_pem                    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n"
  }

  assert {
    condition = alltrue([for e in [
      { name = "TIERLOG_KAFKA_TLS_CLIENT_AUTH", value = "requested" },
      { name = "TIERLOG_KAFKA_TLS_CLIENT_SCOPES_JSON", value = "{}" },
    ] : contains(jsondecode(aws_ecs_task_definition.this.container_definitions)[0].environment, e)])
    error_message = "Requested client certificates with no subjects listed: every client still uses SASL."
  }
}

run "client_auth_is_none_requested_or_required" {
  command = plan

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
    kafka_client_auth                      = "want"
    kafka_client_ca_pem                    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n"
  }

  expect_failures = [var.kafka_client_auth]
}

run "client_auth_needs_kafka_enabled" {
  command = plan

  variables {
    kafka_client_auth   = "required"
    kafka_client_ca_pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n"
  }

  expect_failures = [aws_ecs_task_definition.this]
}

run "client_auth_needs_the_tls_keystore" {
  command = plan

  variables {
    kafka_enabled            = true
    kafka_client_cidr_blocks = ["10.40.0.0/16"]
    kafka_allow_plaintext    = true
    kafka_client_auth        = "required"
    kafka_client_ca_pem      = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n"
  }

  expect_failures = [aws_ecs_task_definition.this]
}

run "client_auth_needs_a_ca" {
  command = plan

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
    kafka_client_auth                      = "required"
  }

  expect_failures = [aws_ecs_task_definition.this]
}

run "client_ca_is_a_pem_certificate" {
  command = plan

  variables {
    kafka_client_ca_pem = "/etc/tierlog/client-ca.pem"
  }

  expect_failures = [var.kafka_client_ca_pem]
}

run "certificate_scopes_need_client_auth" {
  command = plan

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
    kafka_client_certificate_scopes        = { "CN=orders-app,O=Acme" = "produce:topic:orders*" }
  }

  expect_failures = [aws_ecs_task_definition.this]
}

run "certificate_subjects_are_distinguished_names" {
  command = plan

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
    kafka_client_auth                      = "required"
    kafka_client_ca_pem                    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n"
    kafka_client_certificate_scopes        = { "orders-app" = "produce:topic:orders*" }
  }

  expect_failures = [var.kafka_client_certificate_scopes]
}

run "certificate_scopes_are_not_empty" {
  command = plan

  variables {
    kafka_enabled                          = true
    kafka_client_cidr_blocks               = ["10.40.0.0/16"]
    kafka_tls_keystore_secret_arn          = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-AbCdEf"
    kafka_tls_keystore_password_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tierlog/kafka-keystore-password-GhIjKl"
    kafka_client_auth                      = "required"
    kafka_client_ca_pem                    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2xpZW50IENBIGZvciB0ZXN0cw==\n-----END CERTIFICATE-----\n"
    kafka_client_certificate_scopes        = { "CN=orders-app,O=Acme" = " " }
  }

  expect_failures = [var.kafka_client_certificate_scopes]
}
