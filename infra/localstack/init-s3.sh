#!/bin/sh
# LocalStack ready.d hook: create Tierlog's cold-tier bucket (idempotent).
set -eu
bucket="${TIERLOG_BUCKET:-tierlog-local}"
if awslocal s3api head-bucket --bucket "$bucket" >/dev/null 2>&1; then
  echo "tierlog: bucket $bucket exists"
else
  awslocal s3 mb "s3://$bucket"
  echo "tierlog: created bucket $bucket"
fi
