"""Secrets as they turn up in notes, configs and command lines.

The companion of `secret_corpus` (same rules: every secret is drawn at test time, nothing here
is a real credential). Where `secret_corpus` holds one clean case per provider, this corpus holds
the shapes around them: provider token formats as the providers, gitleaks and trufflehog
document them; `.env`, YAML, JSON, TOML and HCL snippets, also with the value on the next
line; command lines (`curl -u`, `sshpass -p`, `docker login -p`, `helm --set`); passwords told
in prose in several phrasings and languages; keys split over two lines; base64 of a secret;
password hashes. The harmless texts that look like these are in `secret_corpus_harmless`.

Each secret case is (name, text as a user would write it, the part that must never be echoed).
"""

from __future__ import annotations

import base64

from tests.secret_corpus import ALNUM, B64, DIGITS, HEX, LOWER, UPPER, URLSAFE, Case, Draw, _uuid


def secrets(seed: int = 21) -> list[Case]:
    d = Draw(seed)
    pw = d.password
    # (name, the text with {} where the secret goes, the secret)
    table = [
        ("gh-oauth", "gh auth token printed {}", "gho_" + d.chars(ALNUM, 36)),
        ("gh-refresh", "refresh {}", "ghr_" + d.chars(ALNUM, 36)),
        ("gh-user2server", "{}", "ghu_" + d.chars(ALNUM, 36)),
        ("gitlab-deploy", "deploy token {}", "gldt-" + d.chars(URLSAFE, 20)),
        ("gitlab-trigger", "trigger {}", "glptt-" + d.chars(HEX, 40)),
        ("gitlab-runner-reg", "register with {}", "GR1348941" + d.chars(URLSAFE, 20)),
        ("slack-app", "socket mode {}",
         f"xapp-1-A{d.chars(UPPER+DIGITS,10)}-{d.digits(13)}-{d.chars(HEX,64)}"),
        ("slack-workflow-webhook", "post to https://hooks.slack.com/triggers/T{}", d.chars(UPPER
         +DIGITS,8)+"/"+d.digits(13)+"/"+d.chars(HEX,32)),
        ("stripe-test", "use {} in tests", "sk_test_51" + d.chars(ALNUM, 97)),
        ("stripe-live-long", "STRIPE_SECRET_KEY={}", "sk_live_51" + d.chars(ALNUM, 97)),
        ("openai-svcacct", "{}", "sk-svcacct-" + d.chars(URLSAFE, 64)),
        ("openai-legacy", "OPENAI_API_KEY={}", "sk-" + d.chars(ALNUM, 20) + "T3BlbkFJ"
         + d.chars(ALNUM, 20)),
        ("anthropic-admin", "admin key {}", "sk-ant-admin01-" + d.chars(URLSAFE, 80)),
        ("aws-pair-ini", "[default]\naws_access_key_id = AKIA" + d.chars(UPPER+DIGITS,16)
         + "\naws_secret_access_key = {}", d.chars(B64, 40)),
        ("aws-sts-json", '{{"Credentials": {{"AccessKeyId": "ASIA' + d.chars(UPPER+DIGITS,16)
         + '", "SecretAccessKey": "{}"}}}}', d.chars(B64, 40)),
        ("aws-secret-alone-json", '{{"SecretAccessKey": "{}"}}', d.chars(B64, 40)),
        ("aws-session-token", 'AWS_SESSION_TOKEN={}', "FwoGZXIvYXdzE" + d.chars(B64, 300)),
        ("gcp-sa-json",
         '{{"type": "service_account", "project_id": "acme", "private_key": '
         '"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n"}}',
         "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + d.chars(B64, 60) + "\\n" + d.chars(B64, 64)),
        ("gcp-pk-escaped-nobegin", '"private_key": "{}"', "MIIEvQIBADANBg" + d.chars(B64, 50)
         + "\\n" + d.chars(B64, 64)),
        ("azure-ad-client-secret", "client secret {}", d.chars(ALNUM, 3) + "8Q~" + d.chars(ALNUM
         + "_~.-", 34)),
        ("azure-conn-string-quoted",
         'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=x;'
         'AccountKey={}"', d.chars(B64, 86) + "=="),
        ("azure-sas-query", "?sv=2021-08-06&se=2026-01-01&sr=c&sp=rwl&sig={}", d.chars(ALNUM, 40)
         + "%2B" + d.chars(ALNUM, 3) + "%3D"),
        ("npmrc-auth", "_auth={}", base64.b64encode(b"deploy:" + pw().encode()).decode()),
        ("pypi-in-pypirc", "[pypi]\nusername = __token__\npassword = {}", "pypi-AgEIcHlwaS5vcmc"
         + d.chars(URLSAFE, 60)),
        ("twilio-sid-token", "Twilio AC" + d.chars(HEX, 32) + " with auth token {}", d.chars(HEX,
         32)),
        ("sendgrid-env", "SENDGRID_API_KEY={}",
         f"SG.{d.chars(URLSAFE, 22)}.{d.chars(URLSAFE, 43)}"),
        ("mailgun-new", "mailgun key {}", f"{d.chars(HEX,32)}-{d.chars(HEX,8)}-{d.chars(HEX,8)}"),
        ("shopify-shared-secret", "{}", "shpss_" + d.chars(HEX, 32)),
        ("shopify-bare", "the app uses {}", "shpat_" + d.chars(HEX, 32)),
        ("databricks", "databricks configure with {}", "dapi" + d.chars(HEX, 32)),
        ("databricks-bare", "{} works again", "dapi" + d.chars(HEX, 32) + "-2"),
        ("vault-batch", "{}", "hvb." + d.chars(URLSAFE, 140)),
        ("vault-service-bare", "login {}", "hvs." + d.chars(URLSAFE, 90)),
        ("vault-legacy", "VAULT_TOKEN={}", "s." + d.chars(ALNUM, 24)),
        ("doppler", "DOPPLER_TOKEN={}", "dp.st.prd." + d.chars(ALNUM, 43)),
        ("doppler-bare", "service token {}", "dp.pt." + d.chars(ALNUM, 43)),
        ("hf-org", "{}", "api_org_" + d.chars(ALNUM, 34)),
        ("jwt-cookie", "Cookie: session={}", "eyJhbGciOiJIUzI1NiJ9." + "eyJ" + d.chars(URLSAFE,
         60) + "." + d.chars(URLSAFE, 43)),
        ("jwt-bare", "{}", "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ." + "eyJ" + d.chars(URLSAFE, 120)
         + "." + d.chars(URLSAFE, 342)),
        ("pk-ec", "-----BEGIN EC PRIVATE KEY-----\n{}\n-----END EC PRIVATE KEY-----", "MHcCAQEEI"
         + d.chars(B64, 55) + "\n" + d.chars(B64, 40)),
        ("pk-pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{}", "lQOYBF" + d.chars(B64, 58)
         + "\n" + d.chars(B64, 64)),
        ("pk-openssh-json",
         '{{"key": "-----BEGIN OPENSSH PRIVATE KEY-----\\n{}\\n'
         '-----END OPENSSH PRIVATE KEY-----"}}',
         "b3BlbnNzaC1rZXktdjEAAAAA" + d.chars(B64, 40) + "\\n" + d.chars(B64, 70)),
        ("pk-encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n{}", "MIIFHDBOBgkqhkiG9w0BBQ0w"
         + d.chars(B64, 40)),
        ("pk-body-escaped", "key material: {}", "MIIEowIBAAKCAQEA" + d.chars(B64, 48) + "\\n"
         + d.chars(B64, 64) + "\\n" + d.chars(B64, 64)),
        ("env-django", "SECRET_KEY={}", "django-insecure-" + d.chars(ALNUM + "!@#$%^&*(-_=+)", 50)),
        ("env-jwt-secret", "JWT_SECRET={}", d.chars(ALNUM, 32)),
        ("env-session-secret", "SESSION_SECRET={}", pw()),
        ("env-smtp-pass", "SMTP_PASS={}", pw()),
        ("env-mysql-root", "MYSQL_ROOT_PASSWORD={}", pw()),
        ("env-database-url", "DATABASE_URL=postgresql://app:{}@db:5432/app", pw()),
        ("env-token-short", "GITHUB_TOKEN={}", "ghp_" + d.chars(ALNUM, 36)),
        ("env-access-token", "ACCESS_TOKEN={}", d.chars(ALNUM, 32)),
        ("env-webhook-secret", "WEBHOOK_SECRET={}", d.chars(HEX, 40)),
        ("export-openai", "export OPENAI_API_KEY={}", "sk-proj-" + d.chars(URLSAFE, 60)),
        ("export-token-quoted", "export API_TOKEN='{}'", d.chars(ALNUM, 40)),
        ("export-password", 'export PGPASSWORD="{}"', pw()),
        ("curl-u", "curl -u admin:{} https://ci.internal/api", pw()),
        ("curl-user-long", "curl --user deploy:{} -X POST https://x.io", pw()),
        ("curl-bearer", "curl -H 'Authorization: Bearer {}' https://api.x.io/v1/me",
         d.chars(URLSAFE, 40)),
        ("curl-api-key-header", 'curl -H "X-API-Key: {}" https://api.x.io', d.chars(ALNUM, 32)),
        ("curl-private-token",
         "curl --header \"PRIVATE-TOKEN: {}\" https://gitlab.example.com/api/v4/projects",
         d.chars(URLSAFE, 20)),
        ("url-api-key-param", "GET https://api.x.io/v1/data?api_key={}&format=json", d.chars(ALNUM,
         32)),
        ("url-access-token-param", "https://graph.x.com/me?access_token={}", "EAAB" + d.chars(ALNUM,
         100)),
        ("kubeconfig-token", "users:\n- name: admin\n  user:\n    token: {}", d.chars(URLSAFE, 40)),
        ("kubeconfig-client-key-data", "    client-key-data: {}",
         "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo" + d.chars(B64, 80)),
        ("docker-config-json", '{{"auths":{{"https://index.docker.io/v1/":{{"auth":"{}"}}}}}}',
         base64.b64encode(b"bob:" + pw().encode()).decode()),
        ("docker-login-p", "docker login -u bob -p {} registry.x.io", pw()),
        ("dsn-mysql", "mysql://root:{}@10.0.0.5:3306/shop", pw()),
        ("dsn-amqp", "amqp://svc:{}@rabbit:5672/", pw()),
        ("dsn-jdbc", "jdbc:postgresql://db:5432/app?user=app&password={}", pw()),
        ("dsn-mssql", "Server=tcp:db.x.net,1433;User ID=sa;Password={};Encrypt=True", pw()),
        ("dsn-sqlalchemy", "postgresql+psycopg2://app:{}@db/app", pw()),
        ("dsn-mongodb-srv-opts", "mongodb+srv://admin:{}@c0.x.mongodb.net/?retryWrites=true", pw()),
        ("prose-login-slash", "login: admin / {}", pw()),
        ("prose-creds-slash", "creds are admin/{} for the router", pw()),
        ("prose-user-password-comma", "user admin, password {}", pw()),
        ("prose-wifi", "the wifi password for the office is {}",
         f"{d.chars(UPPER, 1)}{d.chars(LOWER, 3)}-{d.chars(UPPER, 1)}{d.chars(LOWER, 2)}-"
         f"{d.digits(2)}!"),
        ("prose-password-for", "password for the staging db: {}", pw()),
        ("prose-pw-colon", "pw: {}", pw()),
        ("prose-passwd", "root passwd {}", pw()),
        ("prose-username-password", "username: deploy password: {}", pw()),
        ("prose-password-quoted", 'the password is "{}"', pw()),
        ("prose-pass-set-to", "I set the admin password to {} yesterday", pw()),
        ("prose-pwd-of", "sudo pwd on the box is {}", pw()),
        ("prose-creds-colon", "use admin:{} to log in to grafana", pw()),
        ("prose-secret-is", "the client secret is {}", d.chars(URLSAFE, 32)),
        ("prose-token-is", "my token is {}", d.chars(ALNUM, 40)),
        ("prose-api-key-is", "the api key for mapbox is {}", "sk.eyJ1Ijoi" + d.chars(URLSAFE, 60)
         + "." + d.chars(URLSAFE, 22)),
        ("prose-french", "mot de passe: {}", pw()),
        ("prose-german", "Passwort: {}", pw()),
        ("prose-spanish", "la contraseña es {}", pw()),
        ("yaml-split", "database:\n  password:\n    {}", pw()),
        ("yaml-block", "password: |\n  {}", pw()),
        ("json-pretty", '{{\n  "password":\n    "{}"\n}}', pw()),
        ("toml-password", '[database]\npassword = "{}"', pw()),
        ("toml-token", '[auth]\ntoken = "{}"', d.chars(ALNUM, 40)),
        ("json-apikey-camel", '{{"apiKey": "{}"}}', d.chars(ALNUM, 32)),
        ("json-client-secret", '{{"client_id": "abc", "client_secret": "{}"}}', d.chars(URLSAFE,
         24)),
        ("yaml-access-token", "access_token: {}", d.chars(ALNUM, 36)),
        ("yaml-refresh-token", "refresh_token: {}", "1//0" + d.chars(URLSAFE, 100)),
        ("google-oauth-access", "ya29 token {}", "ya29." + d.chars(URLSAFE, 150)),
        ("k8s-secret-data", "data:\n  password: {}", base64.b64encode(pw().encode()).decode()),
        ("base64-of-env", "the secret blob is {}", base64.b64encode(("DB_PASSWORD="
         + pw()).encode()).decode()),
        ("base64-of-aws-key", "encoded {}", base64.b64encode(("AKIA" + d.chars(UPPER+DIGITS,
         16)).encode()).decode()),
        ("split-key-lines", "the key is AKIA{}", d.chars(UPPER+DIGITS, 8) + "\n" + d.chars(UPPER
         +DIGITS, 8)),
        ("new-relic", "NEW_RELIC {}", "NRAK-" + d.chars(UPPER + DIGITS, 27)),
        ("linear", "linear {}", "lin_api_" + d.chars(ALNUM, 40)),
        ("grafana-sa", "{}", "glsa_" + d.chars(ALNUM, 32) + "_" + d.chars(HEX, 8)),
        ("postman", "postman {}", f"PMAK-{d.chars(HEX,24)}-{d.chars(HEX,34)}"),
        ("atlassian", "jira token {}", "ATATT3xFfGF0" + d.chars(URLSAFE, 170) + "=" + d.chars(HEX,
         8)),
        ("pulumi", "pulumi login with {}", "pul-" + d.chars(HEX, 40)),
        ("supabase", "supabase {}", "sbp_" + d.chars(HEX, 40)),
        ("age-key", "{}", "AGE-SECRET-KEY-1"
         + "".join(d.rng.choice("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") for _ in range(58))),
        ("sentry-user-token", "{}", "sntryu_" + d.chars(HEX, 64)),
        ("discord-webhook", "webhook https://discord.com/api/webhooks/{}", d.digits(18) + "/"
         + d.chars(URLSAFE, 68)),
        ("teams-webhook", "{}", "https://acme.webhook.office.com/webhookb2/" + _uuid(d) + "@"
         + _uuid(d) + "/IncomingWebhook/" + d.chars(HEX, 32) + "/" + _uuid(d)),
        ("tailscale", "{}", "tskey-auth-k" + d.chars(ALNUM, 16) + "-" + d.chars(ALNUM, 32)),
        ("dockerhub-pat", "{}", "dckr_pat_" + d.chars(URLSAFE, 27)),
        ("rubygems", "{}", "rubygems_" + d.chars(HEX, 48)),
        ("buildkite", "{}", "bkua_" + d.chars(HEX, 40)),
        ("planetscale", "{}", "pscale_pw_" + d.chars(URLSAFE, 43)),
        ("1password-sa", "OP_SERVICE_ACCOUNT_TOKEN={}", "ops_eyJ" + d.chars(B64, 200)),
        ("groq", "{}", "gsk_" + d.chars(ALNUM, 52)),
        ("replicate", "{}", "r8_" + d.chars(ALNUM, 37)),
        ("facebook", "page token {}", "EAAG" + d.chars(ALNUM, 150)),
        ("twitter-bearer", "twitter {}", "A" * 21 + d.chars(ALNUM, 20) + "%2F" + d.chars(ALNUM, 30)
         + "%3D" + d.chars(ALNUM, 30)),
        ("cloudflare-token", "CF_API_TOKEN={}", d.chars(URLSAFE, 40)),
        ("notion", "{}", "ntn_" + d.chars(ALNUM, 46)),
        ("airtable-pat", "{}", "pat" + d.chars(ALNUM, 14) + "." + d.chars(HEX, 64)),
        ("netrc-multiline", "machine github.com\n  login bot\n  password {}", d.chars(ALNUM, 40)),
        ("hex-secret-no-word", "HMAC {}", d.chars(HEX, 64)),
        ("ssh-sshpass", "sshpass -p {} ssh root@10.0.0.2", pw()),
        ("mysql-cli-p", "mysql -u root -p{} shop", pw()),
        ("git-credential", "https://oauth2:{}@gitlab.com/acme/x.git", "glpat-" + d.chars(URLSAFE,
         20)),
        ("htpasswd", "admin:{}", "$apr1$" + d.chars(ALNUM, 8) + "$" + d.chars(ALNUM + "./", 22)),
        ("bcrypt", "the hash in the users table is {}", "$2b$12$" + d.chars(ALNUM + "./", 53)),
        ("gh-in-git-remote",
         "git remote set-url origin https://x-access-token:{}@github.com/acme/api.git",
         "ghs_" + d.chars(ALNUM, 36)),
        ("env-yaml-list", "env:\n  - name: STRIPE_KEY\n    value: {}", "sk_live_" + d.chars(ALNUM,
         24)),
        ("helm-set", "helm upgrade api ./chart --set db.password={}", pw()),
        ("terraform-var", 'variable "db_password" {{ default = "{}" }}', pw()),
        ("tfvars", 'admin_password = "{}"', pw()),
        ("python-literal", 'client = OpenAI(api_key="{}")', "sk-proj-" + d.chars(URLSAFE, 56)),
        ("js-literal", "const stripe = require('stripe')('{}');", "sk_live_" + d.chars(ALNUM, 30)),
        ("go-literal", 'token := "{}"', "xoxb-" + d.digits(12) + "-" + d.digits(12) + "-"
         + d.chars(ALNUM, 24)),
        ("prose-passcode", "The door passcode is {}", d.digits(4) + "-" + d.chars(UPPER, 3)
         + d.digits(1)),
        ("prose-admin-pass", "admin password: {}", pw()),
        ("prose-ssh-key-pass", "the ssh key passphrase is {}", pw()),
        ("prose-vpn", "VPN creds: jdoe / {}", pw()),
        ("prose-in-parens", "Staging DB (user app, pw {}) is up again.", pw()),
        ("prose-hyphen", "prod db password - {}", pw()),
        ("prose-arrow", "password -> {}", pw()),
        ("prose-use", "use password {} for the staging box", pw()),
        ("prose-new-password", "new password is {} until Friday", pw()),
        ("aws-cli-configure", "aws configure set aws_secret_access_key {}", d.chars(B64, 40)),
        ("aws-in-prose-two", "key id AKIA" + d.chars(UPPER + DIGITS, 16) + " secret {}",
         d.chars(B64, 40)),
        ("gcloud-key-json-inline", '{{"type":"service_account","private_key_id":"{}"}}',
         d.chars(HEX, 40)),
        ("npmrc-line", "//npm.pkg.github.com/:_authToken={}", "ghp_" + d.chars(ALNUM, 36)),
        ("pip-conf",
         "index-url = https://__token__:{}@gitlab.example.com/api/v4/projects/1/packages/pypi"
         "/simple", "glpat-" + d.chars(URLSAFE, 20)),
        ("docker-run-env", "docker run -e POSTGRES_PASSWORD={} postgres:16", pw()),
        ("k8s-stringdata", "stringData:\n  api-token: {}", d.chars(ALNUM, 40)),
        ("header-x-auth", "X-Auth-Token: {}", d.chars(HEX, 40)),
        ("header-cookie", "Cookie: sessionid={}", d.chars(LOWER + DIGITS, 32)),
        ("basic-header-bare", "basic auth header is Basic {}", base64.b64encode(b"ci:"
         + pw().encode()).decode()),
        ("sendgrid-bare", "{}", f"SG.{d.chars(URLSAFE, 22)}.{d.chars(URLSAFE, 43)}"),
        ("slack-webhook-md", "[alerts](https://hooks.slack.com/services/T{})", d.chars(UPPER
         + DIGITS, 8) + "/B" + d.chars(UPPER + DIGITS, 10) + "/" + d.chars(ALNUM, 24)),
        ("mongodb-uri-quoted", 'MONGO_URI="mongodb://root:{}@mongo:27017/?authSource=admin"', pw()),
        ("ssh-private-inline", "-----BEGIN OPENSSH PRIVATE KEY----- {}",
         "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU" + d.chars(B64, 60)),
        ("pgpass", "db.internal:5432:app:app:{}", pw()),
        ("git-credentials", "https://jdoe:{}@bitbucket.org", d.chars(ALNUM, 20)),
        ("random-secret-quoted", 'secret: "{}"', d.chars(ALNUM + "!@#%^&*", 24)),
        ("spanish-pw", "la clave del wifi es {}", pw()),
        ("hex-token-header", "Authorization: token {}", d.chars(HEX, 40)),
        ("apikey-query-camel", "https://maps.x.com/api?apiKey={}&lang=en", d.chars(ALNUM, 32)),
        ("anthropic-env", "ANTHROPIC_API_KEY={}", "sk-ant-api03-" + d.chars(URLSAFE, 93) + "AA"),
        ("twilio-both", "twilio sid AC" + d.chars(HEX, 32) + " token {}", d.chars(HEX, 32)),
        ("jwt-in-json", '{{"access_token": "{}", "token_type": "Bearer"}}',
         "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + d.chars(URLSAFE, 80) + "." + d.chars(URLSAFE,
                                                              43)),
        ("gh-actions-env", "env:\n  NPM_TOKEN: {}", "npm_" + d.chars(ALNUM, 36)),
        ("compose-env", "environment:\n  - POSTGRES_PASSWORD={}", pw()),
        ("ini-section", "[smtp]\nhost = mail.x.io\nuser = alerts\npass = {}", pw()),
        ("properties", "spring.datasource.password={}", pw()),
        ("xml", "<password>{}</password>", pw()),
        ("xml-attr", '<add key="ApiKey" value="{}" />', d.chars(ALNUM, 32)),
        ("php-define", "define('DB_PASSWORD', '{}');", pw()),
        ("ruby-hash", "config.api_key = '{}'", d.chars(ALNUM, 32)),
        ("js-object", "{{ apiKey: '{}', authDomain: 'x.firebaseapp.com' }}", "AIza"
         + d.chars(URLSAFE, 35)),
        ("rust-const", 'const TOKEN: &str = "{}";', "xoxp-" + d.digits(11) + "-" + d.digits(11)
         + "-" + d.digits(12) + "-" + d.chars(HEX, 32)),
        ("shell-history", "$ heroku config:set SECRET_KEY_BASE={}", d.chars(HEX, 128)),
        ("gcloud", "gcloud auth activate-service-account --key-file=k.json # key id {}",
         d.chars(HEX, 40)),
        ("prose-the-token-for", "The token for the staging API is {}", d.chars(ALNUM, 40)),
        ("prose-key-colon", "OpenAI key: {}", "sk-proj-" + d.chars(URLSAFE, 60)),
        ("prose-root-login", "root login on the NAS is admin / {}", pw()),
        ("prose-pin-code", "the alarm pass code is {}", d.chars(DIGITS, 4) + d.chars(UPPER, 2)
         + "!"),
        ("prose-remember-pw", "Remember: DB pw = {}", pw()),
        ("markdown-table", "| service | password |\n|---|---|\n| grafana | {} |", pw()),
        ("json-nested", '{{"db": {{"user": "app", "password": "{}"}}}}', pw()),
        ("yaml-quoted-next", "credentials:\n  secret:\n    \"{}\"", d.chars(ALNUM, 30)),
        ("env-export-multi", "export DB_USER=app DB_PASS={}", pw()),
        ("aws-key-in-url", "https://s3.amazonaws.com/b/k?AWSAccessKeyId={}&Signature=abc", "AKIA"
         + d.chars(UPPER + DIGITS, 16)),
        ("presigned-sig", "https://b.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Signature={}",
         d.chars(HEX, 64)),
        ("bearer-lowercase", "authorization: bearer {}", d.chars(URLSAFE, 48)),
        ("ssh-key-pasted-no-header",
         "id_ed25519 holds\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ{}", d.chars(B64, 64)),
        ("slack-token-in-prose", "the bot uses token {} since Monday", "xoxb-" + d.digits(12)
         + "-" + d.digits(13) + "-" + d.chars(ALNUM, 24)),
        ("stripe-pk-and-sk", "pk_live_" + d.chars(ALNUM, 24) + " and {}", "sk_live_"
         + d.chars(ALNUM, 24)),
        ("hex-api-key-named", "the Algolia admin key {}", d.chars(HEX, 32)),
        ("uuid-api-key-named", "Heroku API key {}", _uuid(d)),
        ("password-with-space-after-colon", "Password : {}", pw()),
        ("table-token", "| env | token |\n| --- | --- |\n| prod | {} |", d.chars(ALNUM, 40)),
        ("xml-connstr",
         '<connectionStrings><add name="db" connectionString="Server=db;User Id=sa;Password={};" />'
         '</connectionStrings>', pw()),
        ("laravel-env", "'password' => env('DB_PASSWORD', '{}'),", pw()),
        ("token-uuid", "token: {}", _uuid(d)),
        ("gitlab-ci-var", "variables:\n  DEPLOY_TOKEN: \"{}\"", "gldt-" + d.chars(URLSAFE, 20)),
        ("python-kwargs", "psycopg2.connect(host='db', user='app', password='{}')", pw()),
        ("java-props-colon", "db.password: {}", pw()),
        ("prose-passphrase-of", "the passphrase of the backup key is {}", "correct-"
         + d.chars(LOWER, 5) + "-" + d.digits(3)),
    ]
    return [(name, template.format(secret), secret) for name, template, secret in table]
