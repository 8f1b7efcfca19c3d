data "aws_region" "current" {}

locals {
  port             = 8080
  container_name   = "index-service"
  bucket_prefix    = trim(var.cold_prefix, "/")
  object_resources = local.bucket_prefix == "" ? ["${var.cold_bucket_arn}/*"] : ["${var.cold_bucket_arn}/${local.bucket_prefix}/*"]

  environment = {
    TIERLOG_DATA_DIR               = var.data_dir
    TIERLOG_INDEX_DIR              = var.index_dir
    TIERLOG_FSYNC                  = var.fsync
    TIERLOG_COLD_STORE             = "s3"
    TIERLOG_COLD_S3_BUCKET         = var.cold_bucket_name
    TIERLOG_COLD_S3_PREFIX         = var.cold_prefix
    TIERLOG_MAX_REQUEST_BYTES      = tostring(var.max_request_bytes)
    TIERLOG_PRODUCER_ID_EXPIRATION = "${var.producer_id_expiration_ms}ms"
    TIERLOG_SHUTDOWN_TIMEOUT       = "${var.shutdown_timeout_seconds}s"
    QUARKUS_HTTP_PORT              = tostring(local.port)
    QUARKUS_S3_AWS_REGION          = data.aws_region.current.region
    # Every request needs a token (docs/security.md); the service listens beyond loopback only in this mode.
    TIERLOG_AUTH_MODE = "token"
    QUARKUS_HTTP_HOST = "0.0.0.0"
  }
  # Kafka wire protocol (docs/kafka.md). Off: the service opens no Kafka port at all. On: it binds every interface
  # and advertises itself by the task's private DNS name, read from the ECS task metadata endpoint.
  kafka_tls = var.kafka_enabled && var.kafka_tls_keystore_secret_arn != null
  # Client certificates are asked for (the preconditions below make sure the listener speaks TLS and has a CA).
  kafka_client_auth = var.kafka_enabled && var.kafka_client_auth != "none"
  kafka_environment = merge({ TIERLOG_KAFKA_ENABLED = tostring(var.kafka_enabled) }, var.kafka_enabled ? {
    TIERLOG_KAFKA_HOST = "0.0.0.0"
    TIERLOG_KAFKA_PORT = tostring(var.kafka_port)
  } : {}, local.kafka_client_auth ? {
    # Client certificates (docs/kafka.md "Client certificates", ADR 0055). The CA and the subject-to-scopes map are
    # public configuration, read once at task start: plain environment, not secrets.
    TIERLOG_KAFKA_TLS_CLIENT_AUTH        = var.kafka_client_auth
    TIERLOG_KAFKA_TLS_CLIENT_CA_PEM      = var.kafka_client_ca_pem
    TIERLOG_KAFKA_TLS_CLIENT_SCOPES_JSON = jsonencode(var.kafka_client_certificate_scopes)
  } : {})
  # The keystore (base64 of a PKCS12) and its password come from Secrets Manager, never from plain environment.
  kafka_secrets = local.kafka_tls ? [
    { name = "TIERLOG_KAFKA_TLS_KEYSTORE_BASE64", valueFrom = var.kafka_tls_keystore_secret_arn },
    { name = "TIERLOG_KAFKA_TLS_KEYSTORE_PASSWORD", valueFrom = var.kafka_tls_keystore_password_secret_arn },
  ] : []
  kafka_port_mappings = var.kafka_enabled ? [{ containerPort = var.kafka_port, protocol = "tcp" }] : []
  # Name of the Network Load Balancer and its target group: 32 characters at most (the provider says so at plan).
  kafka_lb_name = "${var.name}-kafka"

  jwt_environment = var.jwt_issuer == null ? {} : {
    TIERLOG_AUTH_JWT_ISSUER   = var.jwt_issuer
    TIERLOG_AUTH_JWT_JWKS_URL = coalesce(var.jwt_jwks_url, "${trimsuffix(var.jwt_issuer, "/")}/.well-known/jwks.json")
    TIERLOG_AUTH_JWT_AUDIENCE = var.jwt_audience
  }

  # AWS Distro for OpenTelemetry: scrape the service's Prometheus endpoint and write the Tierlog
  # gauges to CloudWatch as embedded metric format (EMF) logs, which become metrics in
  # var.metrics_namespace with the dimensions declared here. The alarms module reads these names.
  collector_config = yamlencode({
    receivers = {
      prometheus = {
        config = {
          global = { scrape_interval = var.metrics_scrape_interval }
          scrape_configs = [{
            job_name       = "tierlog"
            metrics_path   = "/q/metrics"
            # /q/metrics needs admin:cluster in token mode; the collector presents the bootstrap token, injected
            # from Secrets Manager into its environment ($${...} is the collector's own env expansion).
            authorization = { type = "Bearer", credentials = "$${env:TIERLOG_METRICS_TOKEN}" }
            static_configs = [{ targets = ["localhost:${local.port}"], labels = { service = var.name } }]
          }]
        }
      }
    }
    processors = { batch = {} }
    exporters = {
      awsemf = {
        namespace               = var.metrics_namespace
        log_group_name          = aws_cloudwatch_log_group.metrics.name
        region                  = data.aws_region.current.region
        dimension_rollup_option = "NoDimensionRollup"
        metric_declarations = [
          {
            dimensions            = [["service"]]
            metric_name_selectors = ["tierlog_group_total_lag", "tierlog_group_lag_seconds", "tierlog_tiering_pending_segments", "tierlog_tiering_pending_bytes", "tierlog_tiering_upload_errors_total", "tierlog_hot_tier_full", "tierlog_cold_compaction_failures_total"]
          },
          {
            dimensions            = [["service", "group"]]
            metric_name_selectors = ["tierlog_group_total_lag"]
          },
          {
            dimensions            = [["service", "group", "topic", "partition"]]
            metric_name_selectors = ["tierlog_group_lag", "tierlog_group_lag_seconds"]
          },
        ]
      }
    }
    service = {
      pipelines = {
        metrics = { receivers = ["prometheus"], processors = ["batch"], exporters = ["awsemf"] }
      }
    }
  })
}

resource "aws_ecs_cluster" "this" {
  name = var.name

  setting {
    name  = "containerInsights"
    value = "enabled"
  }

  tags = var.tags
}

resource "aws_cloudwatch_log_group" "this" {
  name              = "/ecs/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_cloudwatch_log_group" "metrics" {
  name              = "/tierlog/${var.name}/metrics"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
  }
}

# Execution role: what ECS itself needs to start the task (pull the images, write container logs).
resource "aws_iam_role" "execution" {
  name               = "${var.name}-execution"
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy_attachment" "execution" {
  role       = aws_iam_role.execution.name
  policy_arn = "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"
}

# The bootstrap admin token (docs/security.md): generated here, stored only in Secrets Manager, injected by ECS into
# the service's (and the metrics collector's) environment at start. Rotating it: raise bootstrap_token_version, then
# start new tasks.
data "aws_secretsmanager_random_password" "bootstrap" {
  password_length     = 48
  exclude_punctuation = true
  include_space       = false
}

resource "aws_secretsmanager_secret" "bootstrap" {
  name_prefix             = "${var.name}-bootstrap-token-"
  description             = "Tierlog bootstrap admin token (admin:cluster) of ${var.name}."
  kms_key_id              = var.secret_kms_key_arn
  recovery_window_in_days = 7
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "bootstrap" {
  secret_id = aws_secretsmanager_secret.bootstrap.id
  # Write-only (Terraform >= 1.11): sent once per secret_string_wo_version, so later plans, which draw a new
  # random value, change nothing. Raise the version to rotate.
  secret_string_wo         = data.aws_secretsmanager_random_password.bootstrap.random_password
  secret_string_wo_version = var.bootstrap_token_version
}

# ECS reads the secrets when it starts a task: the execution role may read the bootstrap token secret (and, with Kafka
# over TLS, the keystore and password secrets) and nothing else.
data "aws_iam_policy_document" "execution_secrets" {
  statement {
    sid       = "BootstrapToken"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.bootstrap.arn]
  }

  # With Kafka over TLS: the keystore and its password, these two secrets only.
  dynamic "statement" {
    for_each = local.kafka_tls ? [[var.kafka_tls_keystore_secret_arn, var.kafka_tls_keystore_password_secret_arn]] : []
    content {
      sid       = "KafkaTlsKeystore"
      actions   = ["secretsmanager:GetSecretValue"]
      resources = statement.value
    }
  }
}

resource "aws_iam_role_policy" "execution_secrets" {
  name   = "bootstrap-token"
  role   = aws_iam_role.execution.id
  policy = data.aws_iam_policy_document.execution_secrets.json
}

# Task role: what the service and its collector do. S3 only on the cold-tier prefix, EFS only through
# the access point, logs only to the metrics log group.
data "aws_iam_policy_document" "task" {
  statement {
    sid = "ColdTierObjects"
    actions = [
      "s3:GetObject",
      "s3:PutObject",
      "s3:DeleteObject",
      "s3:AbortMultipartUpload",
      "s3:ListMultipartUploadParts",
    ]
    resources = local.object_resources
  }

  statement {
    sid       = "ColdTierListing"
    actions   = ["s3:ListBucket"]
    resources = [var.cold_bucket_arn]

    dynamic "condition" {
      for_each = local.bucket_prefix == "" ? [] : [local.bucket_prefix]
      content {
        test     = "StringLike"
        variable = "s3:prefix"
        values   = [condition.value, "${condition.value}/*"]
      }
    }
  }

  statement {
    sid       = "HotVolumeThroughAccessPoint"
    actions   = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]
    resources = [var.efs_file_system_arn]

    condition {
      test     = "StringEquals"
      variable = "elasticfilesystem:AccessPointArn"
      values   = [var.efs_access_point_arn]
    }
  }

  statement {
    sid       = "MetricsAsEmbeddedMetricFormat"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"]
    resources = [aws_cloudwatch_log_group.metrics.arn, "${aws_cloudwatch_log_group.metrics.arn}:*"]
  }

  dynamic "statement" {
    for_each = var.cold_kms_key_arn == null ? [] : [var.cold_kms_key_arn]
    content {
      sid       = "ColdTierKmsKey"
      actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
      resources = [statement.value]
    }
  }
}

resource "aws_iam_role" "task" {
  name               = "${var.name}-task"
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy" "task" {
  name   = "tierlog-index-service"
  role   = aws_iam_role.task.id
  policy = data.aws_iam_policy_document.task.json
}

resource "aws_ecs_task_definition" "this" {
  family                   = var.name
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = var.cpu
  memory                   = var.memory
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.task.arn

  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = "X86_64"
  }

  # RocksDB and the cold-read cache (TIERLOG_INDEX_DIR) live on the task's local disk: derived data.
  ephemeral_storage {
    size_in_gib = var.ephemeral_storage_gib
  }

  volume {
    name = "hot"

    efs_volume_configuration {
      file_system_id     = var.efs_file_system_id
      transit_encryption = "ENABLED"

      authorization_config {
        access_point_id = var.efs_access_point_id
        iam             = "ENABLED"
      }
    }
  }

  container_definitions = jsonencode([
    {
      name         = local.container_name
      image        = var.container_image
      essential    = true
      portMappings = concat([{ containerPort = local.port, protocol = "tcp" }], local.kafka_port_mappings)
      environment  = [for k, v in merge(local.environment, local.jwt_environment, local.kafka_environment) : { name = k, value = v }]
      secrets      = concat([{ name = "TIERLOG_AUTH_BOOTSTRAP_TOKEN", valueFrom = aws_secretsmanager_secret.bootstrap.arn }], local.kafka_secrets)
      mountPoints  = [{ sourceVolume = "hot", containerPath = var.data_dir, readOnly = false }]
      # SIGKILL comes this long after SIGTERM: above the service's own bound, so it always finishes its answers.
      stopTimeout = var.shutdown_timeout_seconds + 10
      healthCheck = {
        command     = var.container_health_check_command
        interval    = 15
        timeout     = 5
        retries     = 3
        startPeriod = 60
      }
      logConfiguration = {
        logDriver = "awslogs"
        options = {
          awslogs-group         = aws_cloudwatch_log_group.this.name
          awslogs-region        = data.aws_region.current.region
          awslogs-stream-prefix = "service"
        }
      }
    },
    {
      name        = "otel-collector"
      image       = var.otel_collector_image
      essential   = false
      environment = [{ name = "AOT_CONFIG_CONTENT", value = local.collector_config }]
      secrets     = [{ name = "TIERLOG_METRICS_TOKEN", valueFrom = aws_secretsmanager_secret.bootstrap.arn }]
      logConfiguration = {
        logDriver = "awslogs"
        options = {
          awslogs-group         = aws_cloudwatch_log_group.this.name
          awslogs-region        = data.aws_region.current.region
          awslogs-stream-prefix = "otel"
        }
      }
    },
  ])

  lifecycle {
    precondition {
      condition     = !var.kafka_enabled || length(var.kafka_client_cidr_blocks) + length(var.kafka_client_security_group_ids) > 0
      error_message = "kafka_enabled = true needs kafka_client_cidr_blocks or kafka_client_security_group_ids: the Kafka port is opened only to the clients named there, never to everyone by default."
    }
    precondition {
      condition     = !var.kafka_enabled || var.kafka_tls_keystore_secret_arn != null || var.kafka_allow_plaintext
      error_message = "kafka_enabled = true without kafka_tls_keystore_secret_arn would carry SASL tokens in plaintext. Set kafka_tls_keystore_secret_arn and kafka_tls_keystore_password_secret_arn, or kafka_allow_plaintext = true to accept plaintext inside the VPC."
    }
    precondition {
      condition     = var.kafka_client_auth == "none" || (var.kafka_enabled && var.kafka_tls_keystore_secret_arn != null)
      error_message = "kafka_client_auth = requested or required needs the Kafka listener over TLS: kafka_enabled = true with kafka_tls_keystore_secret_arn and kafka_tls_keystore_password_secret_arn (kafka_allow_plaintext has no TLS handshake to ask for a certificate in)."
    }
    precondition {
      condition     = var.kafka_client_auth == "none" || var.kafka_client_ca_pem != null
      error_message = "kafka_client_auth = requested or required needs kafka_client_ca_pem, the PEM of the CA certificate(s) that sign client certificates."
    }
    precondition {
      condition     = var.kafka_client_auth != "none" || length(var.kafka_client_certificate_scopes) == 0
      error_message = "kafka_client_certificate_scopes is set while kafka_client_auth = none: no client certificate is asked for, so the subjects would grant nothing. Set kafka_client_auth = requested or required (with kafka_client_ca_pem), or remove the subjects."
    }
  }

  tags = var.tags
}

resource "aws_security_group" "lb" {
  name        = "${var.name}-lb"
  description = "Internal load balancer of the Tierlog index-service"
  vpc_id      = var.vpc_id
  tags        = merge(var.tags, { Name = "${var.name}-lb" })
}

resource "aws_vpc_security_group_ingress_rule" "lb_http" {
  for_each = var.lb_ingress_security_group_ids

  security_group_id            = aws_security_group.lb.id
  description                  = "HTTP from ${each.key}"
  ip_protocol                  = "tcp"
  from_port                    = 80
  to_port                      = 80
  referenced_security_group_id = each.value
}

resource "aws_vpc_security_group_egress_rule" "lb_to_task" {
  security_group_id            = aws_security_group.lb.id
  description                  = "To the index-service tasks"
  ip_protocol                  = "tcp"
  from_port                    = local.port
  to_port                      = local.port
  referenced_security_group_id = aws_security_group.task.id
}

resource "aws_security_group" "task" {
  name        = "${var.name}-task"
  description = "Tierlog index-service tasks"
  vpc_id      = var.vpc_id
  tags        = merge(var.tags, { Name = "${var.name}-task" })
}

resource "aws_vpc_security_group_ingress_rule" "task_from_lb" {
  security_group_id            = aws_security_group.task.id
  description                  = "HTTP from the load balancer"
  ip_protocol                  = "tcp"
  from_port                    = local.port
  to_port                      = local.port
  referenced_security_group_id = aws_security_group.lb.id
}

# Egress: S3 (through the gateway endpoint), EFS, ECR, CloudWatch (through NAT).
resource "aws_vpc_security_group_egress_rule" "task_all" {
  security_group_id = aws_security_group.task.id
  description       = "AWS APIs, image registry, EFS"
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_lb" "this" {
  name               = var.name
  internal           = true
  load_balancer_type = "application"
  security_groups    = [aws_security_group.lb.id]
  subnets            = var.subnet_ids
  idle_timeout       = 60
  tags               = var.tags
}

resource "aws_lb_target_group" "this" {
  name                 = var.name
  port                 = local.port
  protocol             = "HTTP"
  target_type          = "ip"
  vpc_id               = var.vpc_id
  deregistration_delay = 30

  health_check {
    path                = "/q/health/ready"
    matcher             = "200"
    interval            = 15
    healthy_threshold   = 2
    unhealthy_threshold = 3
  }

  tags = var.tags
}

resource "aws_lb_listener" "this" {
  load_balancer_arn = aws_lb.this.arn
  port              = 80
  protocol          = "HTTP"

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.this.arn
  }

  tags = var.tags
}

# Kafka listener (kafka_enabled only). Each task is a Kafka broker and advertises its own private DNS name in Metadata,
# so after bootstrap clients connect to the tasks directly: the task security group admits them on kafka_port. The
# internal Network Load Balancer only gives them one stable bootstrap address (TCP passthrough: TLS ends in the task).
# Clients are the CIDRs and security groups named in the variables, nobody else. The rules are counted by list
# index, so that security groups created in the same apply can be passed; reordering a list replaces its rules.
resource "aws_vpc_security_group_ingress_rule" "task_kafka_from_cidr" {
  count = var.kafka_enabled ? length(var.kafka_client_cidr_blocks) : 0

  security_group_id = aws_security_group.task.id
  description       = "Kafka clients (brokers advertised by private DNS name)"
  ip_protocol       = "tcp"
  from_port         = var.kafka_port
  to_port           = var.kafka_port
  cidr_ipv4         = var.kafka_client_cidr_blocks[count.index]
}

resource "aws_vpc_security_group_ingress_rule" "task_kafka_from_sg" {
  count = var.kafka_enabled ? length(var.kafka_client_security_group_ids) : 0

  security_group_id            = aws_security_group.task.id
  description                  = "Kafka clients (brokers advertised by private DNS name)"
  ip_protocol                  = "tcp"
  from_port                    = var.kafka_port
  to_port                      = var.kafka_port
  referenced_security_group_id = var.kafka_client_security_group_ids[count.index]
}

resource "aws_security_group" "kafka_lb" {
  count = var.kafka_enabled ? 1 : 0

  name        = "${var.name}-kafka-lb"
  description = "Kafka bootstrap load balancer of the Tierlog index-service"
  vpc_id      = var.vpc_id
  tags        = merge(var.tags, { Name = "${var.name}-kafka-lb" })
}

resource "aws_vpc_security_group_ingress_rule" "kafka_lb_from_cidr" {
  count = var.kafka_enabled ? length(var.kafka_client_cidr_blocks) : 0

  security_group_id = aws_security_group.kafka_lb[0].id
  description       = "Kafka clients (bootstrap)"
  ip_protocol       = "tcp"
  from_port         = var.kafka_port
  to_port           = var.kafka_port
  cidr_ipv4         = var.kafka_client_cidr_blocks[count.index]
}

resource "aws_vpc_security_group_ingress_rule" "kafka_lb_from_sg" {
  count = var.kafka_enabled ? length(var.kafka_client_security_group_ids) : 0

  security_group_id            = aws_security_group.kafka_lb[0].id
  description                  = "Kafka clients (bootstrap)"
  ip_protocol                  = "tcp"
  from_port                    = var.kafka_port
  to_port                      = var.kafka_port
  referenced_security_group_id = var.kafka_client_security_group_ids[count.index]
}

# Forwarded connections and health checks: the NLB does not preserve client IPs (below), so the tasks see the NLB.
resource "aws_vpc_security_group_egress_rule" "kafka_lb_to_task" {
  count = var.kafka_enabled ? 1 : 0

  security_group_id            = aws_security_group.kafka_lb[0].id
  description                  = "Kafka to the index-service tasks"
  ip_protocol                  = "tcp"
  from_port                    = var.kafka_port
  to_port                      = var.kafka_port
  referenced_security_group_id = aws_security_group.task.id
}

resource "aws_vpc_security_group_ingress_rule" "task_kafka_from_lb" {
  count = var.kafka_enabled ? 1 : 0

  security_group_id            = aws_security_group.task.id
  description                  = "Kafka from the bootstrap load balancer"
  ip_protocol                  = "tcp"
  from_port                    = var.kafka_port
  to_port                      = var.kafka_port
  referenced_security_group_id = aws_security_group.kafka_lb[0].id
}

resource "aws_lb" "kafka" {
  count = var.kafka_enabled ? 1 : 0

  name               = local.kafka_lb_name
  internal           = true
  load_balancer_type = "network"
  security_groups    = [aws_security_group.kafka_lb[0].id]
  subnets            = var.subnet_ids
  # One task may serve all zones: every NLB node forwards to any healthy task.
  enable_cross_zone_load_balancing = true
  tags                             = var.tags
}

resource "aws_lb_target_group" "kafka" {
  count = var.kafka_enabled ? 1 : 0

  name        = local.kafka_lb_name
  port        = var.kafka_port
  protocol    = "TCP"
  target_type = "ip"
  vpc_id      = var.vpc_id
  # Bootstrap connections are short: a stopping task leaves the target group quickly, its connections closed.
  deregistration_delay   = 10
  connection_termination = true
  # The tasks see the NLB's address, which the task security group admits through the NLB's security group.
  preserve_client_ip = "false"

  health_check {
    protocol            = "TCP"
    port                = "traffic-port"
    interval            = 10
    healthy_threshold   = 2
    unhealthy_threshold = 2
  }

  tags = var.tags
}

resource "aws_lb_listener" "kafka" {
  count = var.kafka_enabled ? 1 : 0

  load_balancer_arn = aws_lb.kafka[0].arn
  port              = var.kafka_port
  protocol          = "TCP"
  # Above Kafka clients' connections.max.idle.ms (9 minutes), so the client closes an idle connection, rather than
  # the NLB dropping it silently (its default is 350 s).
  tcp_idle_timeout_seconds = 600

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.kafka[0].arn
  }

  tags = var.tags
}

resource "aws_ecs_service" "this" {
  name            = var.name
  cluster         = aws_ecs_cluster.this.id
  task_definition = aws_ecs_task_definition.this.arn
  desired_count   = var.desired_count
  launch_type     = "FARGATE"

  deployment_minimum_healthy_percent = var.deployment_minimum_healthy_percent
  deployment_maximum_percent         = var.deployment_maximum_percent
  health_check_grace_period_seconds  = 120

  network_configuration {
    subnets          = var.subnet_ids
    security_groups  = [aws_security_group.task.id]
    assign_public_ip = false
  }

  load_balancer {
    target_group_arn = aws_lb_target_group.this.arn
    container_name   = local.container_name
    container_port   = local.port
  }

  # Kafka bootstrap through the Network Load Balancer (kafka_enabled only).
  dynamic "load_balancer" {
    for_each = aws_lb_target_group.kafka
    content {
      target_group_arn = load_balancer.value.arn
      container_name   = local.container_name
      container_port   = var.kafka_port
    }
  }

  deployment_circuit_breaker {
    enable   = true
    rollback = true
  }

  tags = var.tags

  depends_on = [aws_lb_listener.this, aws_lb_listener.kafka, aws_iam_role_policy.task]
}
