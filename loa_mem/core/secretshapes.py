"""The shapes of secrets no detect-secrets plugin knows, and the shapes that only look like one.

Pure regular expressions, no library: `sensitive` runs them on every text. Three families:

- provider token formats, one rule per provider's documented format (the prefix and the
  alphabet and length of the random part, as the provider documents them and as the gitleaks
  and trufflehog rules of the same name read them);
- passwords as people write them: in a sentence in several languages, a `user / password` or
  `user:password` pair after a login word, a command line (`curl -u`, `sshpass -p`,
  `mysql -pX`, `docker login -p`), a secret-named assignment in `.env`, YAML, JSON or TOML
  (`SMTP_PASS=`, `"apiKey":`, `X-API-Key:`), a webhook URL;
- harmless shapes: public keys and certificates, media data URIs, digests (`sha512-…`, `h1:…`),
  ULIDs, the public object ids and publishable keys of payment APIs, the path of a URL without
  credentials, documentation examples (`AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx…`, `YOUR_API_KEY`),
  code that names a value instead of holding one (`settings.API_KEY`, `api_key=api_key`).
"""

from __future__ import annotations

import re

__all__ = ["MAYBE_PROVIDER", "PASSWORD_RULES", "PROVIDER_RULES", "basic_auth_pair", "decoded",
           "harmless_spans", "id_spans", "is_code_name", "is_doc_example", "is_not_a_value",
           "is_number_field", "joined_values", "looks_like_password", "table_values",
           "wrapped_tokens"]

_SECRET = "a password or secret"
# Provider formats: (kind, strings one of which the text must hold for the expression to be
# compiled and run, expression). The whole match is the token, and it starts a word (the
# expressions leave out a leading `\b` so that the regex engine can search for the prefix).
# Expressions stay strings until a text asks for them: compiling all of them costs more than a
# `remember` of plain words should pay.
PROVIDER_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # OpenAI, Anthropic, OpenRouter and others that follow OpenAI's form
    ("an API key", ("sk-",), r"sk-(?:[a-z]+\d*-){0,2}[A-Za-z0-9_-]{20,}"),
    ("a Google API key", ("AIza",), r"AIza[A-Za-z0-9_-]{30,}"),
    ("a Google OAuth client secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_-]{20,}"),
    ("a Google OAuth token", ("ya29.", "1//0"), r"ya29\.[\w-]{30,}|(?<![\w/])1//0[\w-]{40,}"),
    ("a GitHub token", ("github_pat_", "gh"), r"github_pat_\w{30,}|gh[pousr]_[A-Za-z0-9]{36,}"),
    ("a GitLab token", ("gl",), r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-[\w-]{20,}"),
    ("a Slack token or webhook", ("xapp-", "xox"),
     r"xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,}|xox[abeoprs](?:\.xox[bp])?-[\w-]{20,}"),
    ("a Hugging Face token", ("hf_", "api_org_"), r"(?:hf_|api_org_)[A-Za-z]{30,}"),
    ("an npm token", ("npm_",), r"npm_[A-Za-z0-9]{30,}"),
    ("a Stripe key", ("k_live_", "k_test_", "whsec_"),
     r"[rs]k_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9+/=]{24,}"),
    ("a Shopify token", ("shp",), r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    ("a Databricks token", ("dapi",), r"dapi[a-f0-9]{32}(?:-\d)?\b"),
    ("a Vault token", ("hvs.", "hvb."), r"hv[sb]\.[\w-]{24,}"),
    ("a Doppler token", ("dp.",),
     r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]+\.)?[A-Za-z0-9]{40,}"),
    ("a Mailgun key", ("-",), r"key-[a-f0-9]{32}\b|[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}\b"),
    ("a New Relic key", ("NR",), r"NR(?:AK|AA|II|JS)-[A-Z0-9]{27}\b"),
    ("a Linear key", ("lin_",), r"lin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    ("a Grafana token", ("glsa_", "glc_"),
     r"glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8}\b|glc_[A-Za-z0-9+/]{32,}"),
    ("a Postman key", ("PMAK-",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    ("an Atlassian token", ("ATATT3",), r"ATATT3[\w=-]{100,}"),
    ("a Pulumi token", ("pul-",), r"pul-[a-f0-9]{40}\b"),
    ("a Supabase token", ("sbp_",), r"sbp_[a-f0-9]{40}\b"),
    ("an age secret key", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    ("a Sentry token", ("sntry",), r"sntry[us]_[\w+/=.-]{40,}"),
    ("a Tailscale key", ("tskey-",), r"tskey-[a-z]+-[\w-]{20,}"),
    ("a Docker Hub token", ("dckr_",), r"dckr_(?:pat|oat)_[\w-]{20,}"),
    ("a RubyGems key", ("rubygems_",), r"rubygems_[a-f0-9]{48}\b"),
    ("a Buildkite token", ("bku",), r"bku[ae]_[A-Za-z0-9]{40}\b"),
    ("a PlanetScale token", ("pscale_",), r"pscale_(?:tkn|pw|oauth)_[\w.-]{32,}"),
    ("a 1Password token", ("ops_eyJ",), r"ops_eyJ[\w+/=-]{100,}"),
    ("an API key", (
        "gsk_", "r8_", "xai-", "pplx-", "ntn_", "secret_", "pat", "CFPAT-", "pnu_", "rdme_",
        "CCIPAT_", "oy2", "HRKU-", "dt0c01."),
     r"(?:gsk_[A-Za-z0-9]{48,}|r8_[A-Za-z0-9]{37}\b|xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,}"
     r"|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}\b|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"
     r"|CFPAT-[\w-]{43}|pnu_[A-Za-z0-9]{36}|rdme_[a-z0-9]{70}|CCIPAT_\w{20,}|oy2[a-z0-9]{43}\b"
     r"|HRKU-[\w-]{30,}|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})"),
    ("a DigitalOcean token", ("_v1_",), r"do[pore]_v1_[a-f0-9]{64}\b"),
    ("a Terraform Cloud token", (".atlasv1.",), r"[A-Za-z0-9]{14}\.atlasv1\.[\w-]{60,}"),
    # a Twitter bearer token is URL-encoded base64 after a run of A
    ("a Facebook or Twitter token", ("EAA", "A" * 20),
     r"EAA[A-Z][A-Za-z0-9]{80,}|A{20,}[A-Za-z0-9%]*%[0-9A-F]{2}[A-Za-z0-9%]{20,}"),
    ("a password hash", ("$",), r"\$(?:2[abxy]?|apr1|1|5|6|y|argon2(?:id|i|d))\$[^\s:'\"]{20,}"),
    ("an Azure client secret", ("Q~",), r"(?<![\w~.])[\w~.]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])"),
    ("a webhook URL", ("hook", "Hook", "HOOK"),
     r"(?i)https?://(?:[^\s\"'<>/]*hook[^\s\"'<>/]*/"
     r"|[^\s\"'<>/]+/[^\s\"'<>?#]*hook[^\s\"'<>?#]*/)[^\s\"'<>?#]*[A-Za-z0-9_-]{16,}"),
)

_PW = (r"(?:password|passphrase|passwd|pass ?code|pw|pwd|passwort|kennwort|mot de passe"
       r"|contrase[ñn]a|senha|wachtwoord|l[öo]senord|has[łl]o|salasana|пароль|パスワード|密码"
       r"|비밀번호|clave)")
_PW_WORDS = ("pass", "pw", "pwd", "kennw", "mot de", "contrase", "senha", "wachtw", "senord",
             "hasło", "haslo", "salasana", "пароль", "パスワード", "密码", "비밀번호", "clave")
_USER = r"[\w.@+-]{2,40}"
# "password for the staging db", "clave del wifi"
_FOR = r"(?:\s+(?:for|of|on|at|in|de|del|du|des|der|für|voor|för|do|da)(?:\s+[\w.@/'-]+){1,4}?)?"
_IS = ("(?:\\s(?:is|was|are|es|est|ist|er|\u00e4r|jest|\u00e9|\u00e8)"  # is, ist, är, é, è
       "|-+>?|=>|\u2192|\u2013|\u2014)")  # ->, dashes
_SECRET_NAME = (r"(?:pass(?:word|wd|phrase|code)?|pwd|secret|token|api[_-]?key|access[_-]?key"
                r"|private[_-]?key|client[_-]?key|signing[_-]?key|encryption[_-]?key"
                r"|master[_-]?key|session[_-]?key|license[_-]?key|auth[_-]?key|credentials?"
                r"|_auth)")
# Passwords as written: (kind, words one of which the lowercased text must hold, expression,
# the group holding the value, strict). A strict rule
# refuses only a value that looks like a password (`looks_like_password`); the others refuse
# any value that is not a placeholder or the start of a sentence.
PASSWORD_RULES: tuple[tuple[str, tuple[str, ...], str, int, bool], ...] = (
    ("a password in a URL", ("://",), r"\b[a-z][a-z0-9+.-]*://([^\s/:@]*):([^\s/@]+)@", 2,
     False),
    (_SECRET, _PW_WORDS, rf"(?i)\b{_PW}{_FOR}\s*(?:=|:=|:)\s*[\"'`]?(\S{{3,}})", 1, False),
    (_SECRET, _PW_WORDS, rf"(?i)\b{_PW}{_FOR}\s*{_IS}\s+[\"'`]?(\S{{3,}})", 1, True),
    (_SECRET, _PW_WORDS, rf"(?i)\b{_PW}\s+[\"'`]?(\S{{6,}})", 1, True),
    (_SECRET, _PW_WORDS, rf"(?i)\b(?:set|changed?|reset|updated?)\b[^\n.]{{0,30}}\b{_PW}\s+"
                         r"(?:to|into|as)\s+[\"'`]?(\S+)", 1, True),
    (_SECRET, ("login",), r"(?i)\blogin\s+\S+\s+password\s+(\S+)", 1, False),
    (_SECRET, ("login", "logon", "cred", "account"),
     rf"(?i)\b(?:login|logon|creds?|credentials|account)\b{_FOR}\s*(?:is|are|[:=])?\s*"
     rf"{_USER}\s*[/:]\s*(\S{{4,}})", 1, True),
    (_SECRET, ("log", "sign"), rf"(?i)\b(?:log|sign)\s?(?:in|on)\s+(?:with|as|using)\s+"
                              rf"{_USER}\s*[:/]\s*(\S{{4,}})", 1, True),
    (_SECRET, ("log", "sign"),
     rf"(?i)\b{_USER}:(\S{{4,}})\s+(?:to|and)\s+(?:log|sign)\s?(?:in|on)", 1, True),
    (_SECRET, ("-u", "--user", "-a", "--auth"),
     r"(?i)(?:^|\s)(?:-u|--user|-a|--auth)[\s=]+[\"']?[^\s:\"'/]+:([^\s\"'@]+)", 1, False),
    (_SECRET, ("sshpass", "mysql", "mariadb", "login"),
     r"(?i)\b(?:sshpass|mysql\w*|mariadb\w*|login)\b[^\n|;&]{0,80}?\s-p\s*(\S+)", 1, True),
    (_SECRET, ("redis-cli",), r"(?i)\bredis-cli\b[^\n|;&]{0,80}?\s-a\s+(\S+)", 1, True),
    (_SECRET, ("pass", "pwd", "secret", "token", "key", "credential", "_auth"),
     rf"(?i){_SECRET_NAME}[\"']?\s*(?:\{{\s*(?:default|value)\s*)?(?::=|=|:)\s*[\"'`]?"
     r"([^\s\"'`,;){}\]]+)", 1, True),
    (_SECRET, ("pass", "pwd", "secret", "token", "key", "credential"),  # <password>x</password>
     rf"(?i)<([\w:.-]*{_SECRET_NAME})>\s*([^<\s]+)\s*</\1>", 2, True),
    (_SECRET, ("pass", "pwd", "secret", "token", "key", "credential"),  # define('DB_PASS', 'x')
     rf"(?i)[\"'][\w.-]*{_SECRET_NAME}[\"']\s*,\s*[\"']([^\"'\s]{{4,}})[\"']", 1, True),
    (_SECRET, ("key", "token", "secret", "password"),  # a UUID named as a key
     r"(?i)\b(?:api[ _-]?key|token|secret|password|access[ _-]?key|auth[ _-]?key)"
     r"(?:\s+(?:is|was))?\s*[:=]?\s*[\"']?([0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12})\b", 1,
     False),
    (_SECRET, ("cookie",), r"(?i)\b(?:set-)?cookie:[^\n]*?\b[\w.-]*sess[\w.-]*=([^;\s]{16,})",
     1, True),
    (_SECRET, (":",), r"(?m)^[\w.*-]+:(?:\d+|\*):[\w*-]+:[\w*-]+:(\S+)$", 1, True),  # .pgpass
    ("a bearer token or other authorization header", ("bearer", "authorization"),
     r"(?i)\b(?:authorization:\s*(?:basic|bearer|ssws|token|digest)|bearer)\s+"
     r"([A-Za-z0-9._~+/=-]{12,})", 1, False),
    ("a connection-string key", ("=",),
     r"(?i)(?:^|[;&?\s])(?:SharedAccessKey|AccountKey|SharedSecret|sig|pwd|password)="
     r"([^;&\s]{8,})", 1, False),
)

# The cheap looks: no rule of a family can match a text its look does not find.
MAYBE_PROVIDER = re.compile(r"[\w.+/=~$-]{16,}")

# Values that name a type or stand in for the real thing, in docs and templates.
_NOT_A_VALUE = frozenset((
    "string", "str", "int", "integer", "number", "bool", "boolean", "float", "null", "none",
    "nil", "true", "false", "required", "optional", "any", "object", "array", "text", "bytes",
    "secret", "password", "token", "key", "value", "example", "sample", "redacted", "hidden",
    "masked", "removed", "omitted", "changeme", "placeholder", "tbd", "todo", "pass", "passwd",
    "pwd", "pw", "user", "username",
))
_PLACEHOLDER = r"^(?:<[^>]*>?|\$\{?[\w.]*\}?|\{.*|%\(.*|\*+|x{3,}|X{3,}|\.{3}|…)"
# Code that reads the value from elsewhere: os.environ[...], getenv(...), ENV['...'], getpass(),
# headers["Authorization"], argv[n].
_ENV_READ = r"(?i)^(?:os\.environ|process\.env|[A-Za-z_][\w.]*[(\[])"
# `settings.API_KEY`, `form.password.data`, `api_key`, `OPENAI_API_KEY`: names, not values
_CODE_NAME = (r"^(?:[A-Za-z_]+\d{0,2}(?:\.[A-Za-z_]+\d{0,2})+|[a-z]+(?:_[a-z0-9]+)+"
              r"|[A-Z]+(?:_[A-Z0-9]+)+)$")
_PATH = r"^(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]*)*$"
_VERSION = r"^v?\d+(?:\.\d+)+(?:[-+][\w.]+)?$"
# A documentation example: AWS's own examples end in EXAMPLE, templates say "your key here",
# and a run of x or * stands for the characters left out.
_DOC_EXAMPLE = (r"EXAMPLE|(?i:x{5,}|\*{3,}|\.{3}|…|(?:^|[^a-z])(?:your|here|example"
                r"|placeholder|dummy|fake|changeme|replace_?me|insert)(?:[^a-z]|$))")


_WORD_PART = r"[A-Z]{0,4}[a-z]+\d{0,2}|[A-Z]{2,}\d{0,2}"


def is_code_name(token: str) -> bool:
    """A name made of words (`RemovedInPyjwt3Warning`, `ChatCompletionInputMessageChunk`,
    `AuthTokenRefreshMiddleware`): random text is never mostly runs of lowercase letters."""
    bare = token.replace("_", "").replace("-", "")
    parts = re.findall(_WORD_PART, bare)
    words = sum(1 for part in parts if sum(c.islower() for c in part) >= 3)
    return ("".join(parts) == bare and words >= 2 and words * 2 >= len(parts)
            and sum(c.isdigit() for c in bare) <= 2)


_PHONE_KEY = r"(?i)phone|tel|mobile|cell|fax|contact|call|sms|whatsapp"


def is_number_field(text: str, start: int, end: int) -> bool:
    """Bare digits given as the value of a key that names no phone (`size=3398085269`,
    `"memory_total_bytes": 15032385536`) or after a word that names an id ("run id 7734528891",
    "order 4155550132"): a count or an id, not a phone number."""
    if not text[start:end].isdigit():
        return False
    before = text[max(0, start - 60):start]
    if re.search(r"(?i)\b(?:id|ids|no|order|invoice|build|run|pid|ticket|issue|job|account)"
                 r"[\s#:=]*$", before):
        return True
    key = re.search(r"([\w.-]+)[\"']?\s*[:=]\s*[\"']?$", before)
    return bool(key) and not re.search(_PHONE_KEY, key.group(1))  # type: ignore[union-attr]


def is_doc_example(value: str) -> bool:
    return bool(re.search(_DOC_EXAMPLE, value))


def is_not_a_value(value: str) -> bool:
    """A placeholder, a type name, a variable, a path, a version or a value too short to
    guard anything (`password: X` in a description): not a secret itself."""
    raw = value.strip("\"'`")
    bare = value.strip("\"'`,;.)(:")
    return (len(bare) < 4 or bool(re.match(_PLACEHOLDER, bare)) or bare.lower() in _NOT_A_VALUE
            or bool(re.match(_ENV_READ, raw)) or (bare.isdigit() and len(bare) < 8)
            or bool(re.match(_CODE_NAME, bare) or re.match(_PATH, bare)
                     or re.match(_VERSION, bare))
            or is_doc_example(raw))


def looks_like_password(value: str) -> bool:
    """Letters with digits, or letters with symbols (not the `-_./` of slugs and paths): what a
    password rule asks for, and what a word of a sentence or a name in code (`TokenOpt`)
    lacks."""
    bare = value.strip("\"'`,;.)(:!?")
    if len(bare) < 4 or is_not_a_value(bare) or is_doc_example(value):
        return False
    letters = any(c.isalpha() for c in bare)
    digits = any(c.isdigit() for c in bare)
    symbols = any(not c.isalnum() and c not in "-_./" for c in bare)
    return letters and (digits or symbols)


# Shapes harmless whatever a rule finds inside them.
_HARMLESS = (
    r"\bMEM-\d{8}-[a-z0-9]{3,}\b",  # memory ids
    r"(?<![\w:/.@%+-])[\w.-]+@[\w.-]+:[\w./~-]+(?:\.git)?\b",  # git SSH remotes
    r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|PGP PUBLIC KEY BLOCK|X509 CRL"
    r"|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST)-----(?:\\n|\s)*(?:[A-Za-z0-9+/=]+"
    r"(?:\\n|\s)*)*(?:-----END [A-Z0-9 ]+-----)?",
    r"\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com"
    r"|sk-ecdsa-sha2-nistp256@openssh\.com)\s+AAAA[A-Za-z0-9+/]+=*",
    r"\barn:aws[\w-]*:[\w-]*:[\w-]*:\d*:\S+",  # Amazon resource names
    r"\b(?:ssh|scp|sftp|rsync|mosh)\b[^\n|;&@]{0,60}?\s[\w.-]+@[\w.-]+",  # user@host to log in to
    r"\bdata:(?:image|font|audio|video)/[\w.+-]+;base64,[A-Za-z0-9+/=]+",
)
# Shapes of ids and digests: harmless to the generic rules (entropy, hex keys), though a
# provider's own format inside one is still found.
_IDS = (
    r"(?i)\b(?:sha(?:1|224|256|384|512)|sha3-\d+|md5|h1|blake2[bs]?|xxh\d+)[-:=]"
    r"[A-Za-z0-9+/_-]{16,}={0,2}",
    r"(?i)\b(?:integrity|checksum|digest|hash)\b[\"']?\s*[:=]?\s*[\"']?[A-Za-z0-9+/_-]{16,}=*",
    r"\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b",  # ULID
    r"\b\d+-[a-z0-9]+\.apps\.googleusercontent\.com\b",  # a Google OAuth client id (public)
    r"\b(?:pk_(?:live|test)|cs_(?:live|test)|ch|pi|cus|price|prod|sub|evt|txn|pm|seti|acct"
    r"|card|tok|plan|sess)_[A-Za-z0-9]{8,}\b",  # payment API object ids, publishable keys
)
_URL = r"\bhttps?://([^\s/\"'<>?#]+)(/[^\s\"'<>?#]*)?"


def harmless_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for rx in _HARMLESS for m in re.finditer(rx, text)]


def id_spans(text: str) -> list[tuple[int, int]]:
    """Ids, digests, and the path of a URL that holds no credentials and is no webhook."""
    spans = [m.span() for rx in _IDS for m in re.finditer(rx, text)]
    for url in re.finditer(_URL, text):
        if url.group(2) and "@" not in url.group(1) and "hook" not in url.group().lower():
            spans.append((url.start(), url.end(2)))
    return spans


_CELL = r"\|([^|\n]*)"
_SECRET_COLUMN = rf"(?i){_SECRET_NAME}s?|pw|api key|access key|pin"


def table_values(text: str) -> list[tuple[int, str]]:
    """The cells of a Markdown table's column whose header names a secret (`| host | password |`):
    (where the cell's text starts, the text)."""
    found: list[tuple[int, str]] = []
    columns: list[int] | None = None
    offset = 0
    for line in text.split("\n"):
        if not line.lstrip().startswith("|"):
            columns = None
        elif columns is None:
            columns = [n for n, cell in enumerate(re.finditer(_CELL, line))
                       if re.fullmatch(_SECRET_COLUMN, cell.group(1).strip())]
        elif columns and not set(line.strip()) <= set("|-: "):
            cells = list(re.finditer(_CELL, line))
            for n in columns:
                if n < len(cells) and cells[n].group(1).strip():
                    value = cells[n].group(1)
                    start = offset + cells[n].start(1) + len(value) - len(value.lstrip())
                    found.append((start, value.strip()))
        offset += len(line) + 1
    return found


_CONTINUED = r"(?m)([:=][ \t]*)([|>][+-]?[ \t]*)?\n[ \t]*(?=\S)"


def joined_values(text: str) -> str:
    """`password:` with its value on the next line (YAML, a YAML block, pretty JSON) joined to
    one line, the same length, so a finding's position stays right."""
    return re.sub(_CONTINUED, lambda m: m.group(1) + " " * (len(m.group()) - len(m.group(1))), text)


_WRAPPED = r"(?<![\w+/=.~-])[\w+/=.~-]{4,}(?:\n[ \t]*[\w+/=.~-]{4,})+"
_BREAK = r"\n[ \t]*"


def wrapped_tokens(text: str) -> list[tuple[str, list[int]]]:
    """Tokens hard-wrapped over lines (a key split in two), each joined again: (the token, the
    position in `text` of each of its characters). Only those of 20 characters or more."""
    found = []
    for run in re.finditer(_WRAPPED, text):
        pieces: list[str] = []
        places: list[int] = []
        last = run.start()
        for line_break in re.compile(_BREAK).finditer(text, run.start(), run.end()):
            pieces.append(text[last:line_break.start()])
            places.extend(range(last, line_break.start()))
            last = line_break.end()
        pieces.append(text[last:run.end()])
        places.extend(range(last, run.end()))
        if len(places) >= 20:
            found.append(("".join(pieces), places))
    return found


_B64 = r"^(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
_USER_AND_PASSWORD = r"^[\w.@+-]{1,64}:(\S{4,})$"


def decoded(token: str) -> str | None:
    """The text a base64 token encodes, when it encodes text; None otherwise."""
    if not re.match(_B64, token):
        return None
    import base64
    import binascii

    try:
        plain = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    printable = sum(c.isprintable() or c in "\n\t\r" for c in plain)
    return plain if printable >= len(plain) * 0.95 else None


def basic_auth_pair(plain: str) -> bool:
    """`user:password`, as a basic-auth header or a docker or npm config encodes it."""
    pair = re.match(_USER_AND_PASSWORD, plain.strip())
    return bool(pair) and looks_like_password(pair.group(1))  # type: ignore[union-attr]
