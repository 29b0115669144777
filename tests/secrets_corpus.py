"""A labelled corpus for the secret detectors (scripts/_lib/redact.py).

Positives: every kind of secret the README claims, generated here with a fixed seed (no
real credential is committed), each placed in many contexts: prose, shell, .env, YAML,
JSON, XML, INI, code in several languages, URLs, log lines, markdown tables, with quotes,
punctuation and line ends around it. Negatives: hand-written innocent snippets (code that
reads secrets from the environment, placeholders, digests, identifiers), and the real
source files of the standard library and the installed packages, read at test time.

`python3 tests/secrets_corpus.py` prints the figures (recall per kind, files altered).
"""

from __future__ import annotations

import base64
import json
import os
import random
import string
import sys
import sysconfig
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

SEED = 1307
VARIANTS = 3  # different generated secrets per (kind, context)
LIBRARY_SAMPLE = 4000  # source files of the standard library and installed packages
RECALL_FLOOR = 0.99
ALTERED_CEILING = 0.005

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
WORDS = ("amber anchor apple arrow autumn badger bamboo banjo beacon birch bison blossom breeze bronze cactus candle "
         "canyon carbon cedar cherry cobalt comet copper coral cotton crystal daisy delta desert dragon eagle ember "
         "falcon fern fjord forest fossil galaxy garnet ginger glacier granite harbor hazel hunter indigo island ivory "
         "jaguar jasmine juniper kettle lagoon lantern lemon lilac linen lotus maple marble meadow mercury meteor "
         "mint monkey nectar nickel nova oasis olive onyx orbit orchid otter panda pepper pebble pine planet plum "
         "prairie quartz quill raven river robin saffron salmon sapphire sierra silver sparrow spruce summer sunset "
         "thistle thunder tiger topaz tulip tundra velvet violet walnut willow winter zephyr").split()


def pick(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def mixed(rng: random.Random, alphabet: str, count: int) -> str:
    """Like `pick`, but with at least one upper, one lower and one digit, as generated tokens have."""
    while True:
        value = pick(rng, alphabet, count)
        if any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value):
            return value


# -- secrets by kind ----------------------------------------------------------------------------------

def password(rng: random.Random, charset: str = "bare") -> str:
    """A password as people and generators make them; `charset` says what the context allows unquoted."""
    symbols = {"bare": "!@%^*_-+.=~", "quoted": "!@#$%^&*()_-+=?.,:;~ ", "url": "-_.~",
               "xml": "!@#$%^*_-+=?.:;~"}[charset]
    style = rng.randrange(6)
    if style == 0:
        return mixed(rng, ALNUM + symbols.replace(" ", ""), rng.randint(10, 20))
    if style == 1:
        return "-".join(rng.sample(WORDS, rng.randint(3, 4))) + (str(rng.randint(0, 99)) if rng.random() < .5 else "")
    if style == 2:
        return rng.choice(WORDS) + str(rng.randint(1, 9999))
    if style == 3:
        tail = rng.choice(symbols.replace(" ", "") or "!") if symbols else ""
        return rng.choice(WORDS).capitalize() + str(rng.randint(2000, 2030)) + tail
    if style == 4:
        return rng.choice(WORDS) + rng.choice(WORDS)  # lower case only
    if charset == "quoted":
        return " ".join(rng.sample(WORDS, 4))  # a spaced passphrase
    return pick(rng, LOWER + DIGITS, rng.randint(8, 14))


def pem(rng: random.Random) -> str:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                        "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK", "DSA PRIVATE KEY"])
    lines = [pick(rng, B64, 64) for _ in range(rng.randint(3, 8))] + [pick(rng, B64, rng.randint(8, 60)) + "=="]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def b64url_json(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    header = b64url_json({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"})
    payload = b64url_json({"sub": pick(rng, DIGITS, 8), "name": rng.choice(WORDS),
                           "iat": rng.randint(1_600_000_000, 1_800_000_000)})
    return f"{header}.{payload}.{pick(rng, B64URL, 43)}"


def basic(rng: random.Random) -> str:
    return base64.b64encode(f"{rng.choice(WORDS)}:{password(rng)}".encode()).decode()


def aws_secret(rng: random.Random) -> str:
    """40 characters of base64, often with several `/` and `+` (they are not rare in real keys)."""
    while True:
        value = list(mixed(rng, ALNUM, 40))
        for index in rng.sample(range(1, 39), rng.randint(0, 4)):
            value[index] = rng.choice("/+")
        return "".join(value)


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "private-key": pem,
    "aws-access-key": lambda rng: rng.choice(["AKIA", "ASIA"]) + pick(rng, UPPER + DIGITS, 16),
    "aws-secret-key": aws_secret,
    "github-token": lambda rng: rng.choice(["ghp_", "gho_", "ghs_", "ghu_", "ghr_"]) + mixed(rng, ALNUM, 36)
    if rng.random() < .7 else "github_pat_11" + mixed(rng, ALNUM, 20) + "_" + mixed(rng, ALNUM, 59),
    "gitlab-token": lambda rng: "glpat-" + mixed(rng, B64URL, 20),
    "slack-token": lambda rng: f"xox{rng.choice('bpa')}-{pick(rng, DIGITS, 12)}-{pick(rng, DIGITS, 13)}-"
                               f"{mixed(rng, ALNUM, 24)}",
    "slack-webhook": lambda rng: f"https://hooks.slack.com/services/T{pick(rng, UPPER + DIGITS, 8)}/"
                                 f"B{pick(rng, UPPER + DIGITS, 10)}/{mixed(rng, ALNUM, 24)}",
    "google-api-key": lambda rng: "AIza" + mixed(rng, B64URL, 35),
    "google-client-secret": lambda rng: "GOCSPX-" + mixed(rng, B64URL, 28),
    "stripe-key": lambda rng: rng.choice(["sk_live_", "sk_test_", "rk_live_"]) + mixed(rng, ALNUM, rng.randint(24, 99))
    if rng.random() < .8 else "whsec_" + mixed(rng, ALNUM, 32),
    "openai-key": lambda rng: rng.choice(["sk-", "sk-proj-", "sk-svcacct-"]) + mixed(rng, ALNUM, 48)
    if rng.random() < .5 else "sk-proj-" + mixed(rng, B64URL, 124) + "T3BlbkFJ" + mixed(rng, B64URL, 20),
    "anthropic-key": lambda rng: "sk-ant-api03-" + mixed(rng, B64URL, 93) + "AA",
    "huggingface-token": lambda rng: "hf_" + mixed(rng, ALNUM, 34),
    "npm-token": lambda rng: "npm_" + mixed(rng, ALNUM, 36),
    "pypi-token": lambda rng: "pypi-AgEIcHlwaS5vcmc" + mixed(rng, B64URL, 150),
    "sendgrid-key": lambda rng: f"SG.{mixed(rng, B64URL, 22)}.{mixed(rng, B64URL, 43)}",
    "jwt": jwt,
    "high-entropy-string": lambda rng: mixed(rng, rng.choice([ALNUM, B64URL, B64]), rng.randint(32, 64)),
}

# -- contexts -------------------------------------------------------------------------------------------
# `{s}` is where the secret goes; contexts are filled with str.replace, so braces are literal.

TOKEN_CONTEXTS = [
    # prose and markdown
    "I rotated {s} this morning, the old one is revoked.",
    "The deploy token is {s}",
    "Use {s} for the staging deploy.",
    "(token: {s})",
    "- staging key: `{s}`",
    "| staging | {s} | rotated 2024-05-01 |",
    "> paste {s} into the settings page",
    "Key was \"{s}\", now revoked.",
    "<{s}>",
    "[{s}]",
    # shell and .env
    "export API_TOKEN={s}",
    "export API_TOKEN=\"{s}\"",
    "API_KEY={s}",
    "SERVICE_TOKEN='{s}'",
    "curl -H 'X-Api-Key: {s}' https://api.example.com/v1/items",
    "curl -s \"https://api.example.com/v1/items?api_key={s}&limit=10\"",
    "echo {s} | docker login --password-stdin ghcr.io",
    # YAML, JSON, INI, XML
    "token: {s}",
    "  api_key: '{s}'",
    "env:\n  - name: SERVICE_TOKEN\n    value: \"{s}\"",
    "{\"token\": \"{s}\"}",
    "  \"apiKey\": \"{s}\",",
    "[default]\ntoken = {s}",
    "<apiKey>{s}</apiKey>",
    # code
    "client = Client(api_key=\"{s}\")",
    "TOKEN = '{s}'",
    "headers = {\"Authorization\": \"token {s}\"}",
    "const token = '{s}';",
    "fetch(url, { headers: { 'x-api-key': `{s}` } })",
    "token := \"{s}\"",
    "config.api_key = '{s}'",
    "String apiKey = \"{s}\";",
    "$apiKey = \"{s}\";",
    "let key = \"{s}\".to_string();",
    # logs
    "2024-03-01T12:00:00Z DEBUG auth ok token={s} user=bob",
    "[INFO] uploading with credentials {s}",
    "ERROR 401 for key {s}: expired",
]

PASSWORD_CONTEXTS = [
    ("DB_PASSWORD={s}", "bare"),
    ("export PGPASSWORD={s}", "bare"),
    ("export DB_PASSWORD=\"{s}\"", "quoted"),
    ("POSTGRES_PASSWORD={s}", "bare"),
    ("MYSQL_ROOT_PASSWORD='{s}'", "quoted"),
    ("db_password={s}", "bare"),
    ("DB_PASSWORD = {s}", "bare"),
    ("Db_Password={s}", "bare"),
    ("SMTP_PASS={s}", "bare"),
    ("ADMIN_PWD={s}", "bare"),
    ("set DB_PASSWORD={s}", "bare"),
    ("$env:DB_PASSWORD = \"{s}\"", "quoted"),
    ("ENV DB_PASSWORD={s}", "bare"),
    ("docker run -e POSTGRES_PASSWORD={s} -d postgres:16", "bare"),
    ("PGPASSWORD={s} psql -h db -U app app", "bare"),
    ("password={s}", "bare"),
    ("password = {s}", "bare"),
    ("spring.datasource.password={s}", "bare"),
    ("[client]\nuser = app\npassword = {s}", "bare"),
    ("password: {s}", "bare"),
    ("  password: \"{s}\"", "quoted"),
    ("POSTGRES_PASSWORD: {s}", "bare"),
    ("    db_password: '{s}'", "quoted"),
    ("environment:\n  - DB_PASSWORD={s}", "bare"),
    ("{\"password\": \"{s}\"}", "quoted"),
    ("\"db_password\": \"{s}\",", "quoted"),
    ("{\"user\": \"app\", \"pass\": \"{s}\"}", "quoted"),
    ("<password>{s}</password>", "xml"),
    ("<add key=\"DbPassword\" value=\"{s}\" />", "xml"),
    ("Server=db;Database=app;User Id=sa;Password={s};", "bare"),
    ("host=db port=5432 user=app password={s} dbname=app", "bare"),
    ("https://db.example.com/login?user=bob&password={s}", "url"),
    ("password = \"{s}\"", "quoted"),
    ("conn = psycopg2.connect(host=\"db\", user=\"app\", password=\"{s}\")", "quoted"),
    ("PASSWORD = '{s}'", "quoted"),
    ("const password = '{s}';", "quoted"),
    ("  password: '{s}',", "quoted"),
    ("\tPassword: \"{s}\",", "quoted"),
    ("String password = \"{s}\";", "quoted"),
    ("$password = '{s}';", "quoted"),
    (":password => '{s}'", "quoted"),
    ("var dbPassword = \"{s}\";", "quoted"),
    ("props.setProperty(\"password\", \"{s}\");", "quoted"),
    ("os.environ[\"DB_PASSWORD\"] = \"{s}\"", "quoted"),
    ("--password {s}", "bare"),
    ("mysql --password={s} app", "bare"),
    ("wget --user=bob --password={s} https://files.example.com/a.tgz", "bare"),
    ("The database password is {s}", "bare"),
    ("the admin pwd is {s}.", "bare"),
    ("machine api.example.com login bob password {s}", "bare"),
    ("requirepass {s}", "bare"),
    ("2024-01-01 12:00:00 ERROR connect failed password={s} host=db", "bare"),
    ("| DB_PASSWORD | {s} |", "bare"),
]

URL_CONTEXTS = [
    "postgres://app:{s}@db.internal:5432/app",
    "postgresql+psycopg2://app:{s}@db/app",
    "redis://:{s}@cache:6379/0",
    "mysql://root:{s}@localhost/shop",
    "mongodb+srv://admin:{s}@cluster0.abcde.mongodb.net/?retryWrites=true",
    "amqp://guest:{s}@rabbit:5672//",
    "https://bob:{s}@git.example.com/team/repo.git",
    "ftp://upload:{s}@ftp.example.org/incoming",
    "DATABASE_URL=postgres://app:{s}@db:5432/app",
    "url: \"redis://default:{s}@cache.example.com:6380\"",
    "{\"dsn\": \"mysql://app:{s}@db/app\"}",
    "engine = create_engine(\"postgresql://app:{s}@localhost/app\")",
    "git clone https://oauth2:{s}@gitlab.example.com/group/project.git",
    "Connect with `postgres://app:{s}@db/app` from the bastion.",
]

CLI_CONTEXTS = [
    ("mysql -u root -p{s} app", "bare"),
    ("mysqldump -uroot -p{s} shop > shop.sql", "bare"),
    ("mysql -h db -u app -p'{s}' -e 'select 1'", "quoted"),
    ("mariadb -uapp -p{s}", "bare"),
    ("sshpass -p '{s}' ssh deploy@10.0.0.5", "quoted"),
    ("sshpass -p {s} scp build.tar deploy@host:/srv", "bare"),
    ("curl -u admin:{s} https://ci.example.com/api/json", "bare"),
    ("curl --user bob:{s} -X POST https://api.example.com/v1/run", "bare"),
    ("redis-cli -h cache -a {s} ping", "bare"),
    ("docker login -u bob -p {s} registry.example.com", "bare"),
    ("openssl pkcs12 -export -in cert.pem -passout pass:{s} -out cert.p12", "bare"),
    ("keytool -importkeystore -srckeystore a.jks -srcstorepass {s}", "bare"),
    ("ldapsearch -x -D cn=admin,dc=example,dc=org -w {s} -b dc=example,dc=org", "bare"),
    ("sqlcmd -S db -U sa -P {s} -Q 'select 1'", "bare"),
    ("smbclient //fs/share -U bob%{s}", "bare"),
    ("zip -P {s} backup.zip notes.txt", "bare"),
    ("7z a -p{s} backup.7z docs/", "bare"),
]

AUTH_CONTEXTS = [
    "Authorization: Basic {basic}",
    "curl -H 'Authorization: Basic {basic}' https://api.example.com/",
    "headers = {\"Authorization\": \"Basic {basic}\"}",
    "proxy-authorization: basic {basic}",
    "Authorization: Bearer {bearer}",
    "curl -H \"Authorization: Bearer {bearer}\" https://api.example.com/v1/me",
    "axios.defaults.headers.common['Authorization'] = 'Bearer {bearer}';",
    "2024-05-01 10:00:01 DEBUG > authorization: bearer {bearer}",
    "Authorization: token {bearer}",
]

AWS_SECRET_CONTEXTS = [
    "The second value is {s}",
    "AKIAIOSFODNN7EXAMPL1,{s}",
    "aws_secret_access_key = {s}",
    "AWS_SECRET_ACCESS_KEY={s}",
    "\"SecretAccessKey\": \"{s}\",",
    "aws configure set aws_secret_access_key {s}",
    "new AWS.Credentials('AKIAIOSFODNN7EXAMPL1', '{s}')",
    "s3 = boto3.client('s3', aws_secret_access_key='{s}')",
    "| prod | {s} |",
    "secret: {s}",
    "`{s}`",
]

PRIVATE_KEY_CONTEXTS = [
    "{s}",
    "Key for the box:\n\n{s}\n\nDo not share.",
    "```\n{s}\n```",
    "ssh_key: |\n{indented}",
    "{\"private_key\": \"{json}\"}",
    "KEY = \"\"\"{s}\"\"\"",
]


class Sample(NamedTuple):
    kind: str
    context: str
    text: str
    secret: str


def _filled(template: str, secret: str) -> str:
    return template.replace("{s}", secret)


def positives(seed: int = SEED, variants: int = VARIANTS) -> list[Sample]:
    """Every kind in every context that suits it, `variants` times with different secrets."""
    rng = random.Random(seed)
    samples: list[Sample] = []
    for _ in range(variants):
        for kind, generate in GENERATORS.items():
            if kind == "private-key":
                for template in PRIVATE_KEY_CONTEXTS:
                    secret = generate(rng)
                    text = (template.replace("{indented}", "\n".join("  " + line for line in secret.splitlines()))
                            .replace("{json}", secret.replace("\n", "\\n")).replace("{s}", secret))
                    samples.append(Sample(kind, template, text, secret))
                continue
            templates = AWS_SECRET_CONTEXTS if kind == "aws-secret-key" else TOKEN_CONTEXTS
            for template in templates:
                secret = generate(rng)
                samples.append(Sample(kind, template, _filled(template, secret), secret))
        for template, charset in PASSWORD_CONTEXTS:
            secret = password(rng, charset)
            samples.append(Sample("password", template, _filled(template, secret), secret))
        for template in URL_CONTEXTS:
            secret = password(rng, "url")
            samples.append(Sample("url-password", template, _filled(template, secret), secret))
        for template, charset in CLI_CONTEXTS:
            secret = password(rng, "quoted" if charset == "quoted" else "bare").replace("'", "")
            samples.append(Sample("cli-password", template, _filled(template, secret), secret))
        for template in AUTH_CONTEXTS:
            secret = basic(rng) if "{basic}" in template else mixed(rng, B64URL + ".", rng.randint(32, 64))
            text = template.replace("{basic}", secret).replace("{bearer}", secret)
            samples.append(Sample("auth-header", template, text, secret))
    return samples


def leaked(sample: Sample, scrubbed: str) -> bool:
    """Whether any of the secret survives: the whole of it, or a run of 8 of its characters."""
    secret = sample.secret
    if secret in scrubbed:
        return True
    window = 8
    return len(secret) >= 2 * window and any(secret[i:i + window] in scrubbed and secret[i:i + window] not in
                                             sample.context for i in range(len(secret) - window + 1))


# -- negatives -------------------------------------------------------------------------------------------

INNOCENT = [
    # the false positives of issue 13
    "class AbstractSingletonProxyFactoryBean2Impl extends AbstractFactoryBean {}",
    "\"integrity\": \"sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5Aaw8tcE2HM2P2VRwzfjWuJCUEn6iqOyQYc8pA"
    "==\",",
    "password = os.environ['DB_PASSWORD']",
    "pip install sk-learn-intelex-compat-layer-for-scikit",
    # reading a secret instead of holding it
    "password = getpass.getpass('Password: ')",
    "db_password = os.getenv(\"DB_PASSWORD\")",
    "token = request.headers.get('Authorization')",
    "secret_key = settings.SECRET_KEY",
    "api_key: str | None = None",
    "password: Optional[str] = None,",
    "def login(self, username, password=None, token=None):",
    "    self.password = password",
    "conn = connect(host=host, user=user, password=password)",
    "const apiKey = process.env.OPENAI_API_KEY;",
    "password := os.Getenv(\"DB_PASSWORD\")",
    "DB_PASSWORD=${DB_PASSWORD}",
    "export PGPASSWORD=$DB_PASSWORD",
    "password: {{ .Values.db.password }}",
    "password: <your-password>",
    "password: ********",
    "PASSWORD=changeme",
    "api_key = \"YOUR_API_KEY\"",
    "token = \"<token>\"",
    "postgres://user:password@localhost:5432/mydb",
    "postgresql+psycopg2://scott:tiger@localhost/test",
    "redis://localhost:6379/0",
    "mysql -u root -p mydb",
    "curl -u \"$USER:$PASS\" https://api.example.com",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "sshpass -p \"$SSHPASS\" ssh host",
    "The password: required. Tokens are counted per request.",
    "Enter your password below and press return.",
    ":param password: the password to use for the connection",
    "PASSWORD_MIN_LENGTH = 8",
    "TOKEN_URL = \"https://oauth2.googleapis.com/token\"",
    "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
    "token = tokens[index + 1]",
    "key = cache_key(request)",
    "tokenizer = AutoTokenizer.from_pretrained(\"bert-base-uncased\")",
    "if token == \"(\":",
    "for key, value in sorted(mapping.items()):",
    "apiKeyEnv: OPENAI_API_KEY",
    # digests, ids and encoded data
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "requests/api.py,sha256=Mv3J4Sm8Sj3R96jkHb4ZsMvzqzGrRiXbBNx7lJCWxXs,6450",
    "golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bI+0zXKWiQ=",
    "<script src=\"a.js\" integrity=\"sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC\">",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl bob@laptop",
    "SOME_VERY_LONG_CONSTANT_NAME_IN_UPPER_CASE_FOR_CONFIGURATION",
    "test_parse_returns_the_expected_value_when_given_an_empty_string",
    "src/main/java/com/example/service/internal/AccountRepositoryImpl.java",
    "getAuthenticationTokenFromRequestHeaderOrCookie",
    "learning-a-rather-long-slug-about-the-deploy-pipeline-2",
    "see https://github.com/org/repo/blob/main/docs/README.md#installation",
    "git@github.com:org/repo.git",
    "http://[::1]:8080/health",
    "\"resolved\": \"https://registry.npmjs.org/react/-/react-18.2.0.tgz\",",
]


def library_files(limit: int = LIBRARY_SAMPLE, seed: int = SEED) -> list[Path]:
    """A fixed sample of the Python source files of the standard library and installed packages."""
    roots = {Path(sysconfig.get_paths()[name]) for name in ("stdlib", "purelib", "platlib")}
    files: set[Path] = set()
    for root in roots:
        for directory, names, filenames in os.walk(root):
            names[:] = sorted(name for name in names if name != "__pycache__")
            files.update(Path(directory) / name for name in filenames if name.endswith(".py"))
    ordered = sorted(files)
    return sorted(random.Random(seed).sample(ordered, min(limit, len(ordered))))


def read_source(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# -- figures -------------------------------------------------------------------------------------------

class Figures(NamedTuple):
    recall: float
    per_kind: dict[str, tuple[int, int]]  # kind -> (caught, total)
    misses: list[Sample]
    innocent_altered: list[str]
    files_altered: list[tuple[Path, list[str]]]
    files_total: int

    @property
    def altered_rate(self) -> float:
        return len(self.files_altered) / max(self.files_total, 1)

    def report(self) -> str:
        lines = [f"secrets recall: {self.recall:.4f} ({sum(c for c, _ in self.per_kind.values())}/"
                 f"{sum(t for _, t in self.per_kind.values())} generated secrets in {len(self.per_kind)} kinds)",
                 f"source files altered: {self.altered_rate:.4f} ({len(self.files_altered)}/{self.files_total} "
                 "files of the standard library and installed packages)",
                 f"innocent snippets altered: {len(self.innocent_altered)}/{len(INNOCENT)}",
                 "recall per kind:"]
        lines += [f"  {kind:22} {caught}/{total}" for kind, (caught, total) in sorted(self.per_kind.items())]
        return "\n".join(lines)


def measure(scrub: Callable[[str], str], files: Iterator[Path] | list[Path] | None = None) -> Figures:
    samples = positives()
    per_kind: dict[str, list[int]] = {}
    misses = []
    for sample in samples:
        counts = per_kind.setdefault(sample.kind, [0, 0])
        counts[1] += 1
        if leaked(sample, scrub(sample.text)):
            misses.append(sample)
        else:
            counts[0] += 1
    innocent_altered = [snippet for snippet in INNOCENT if scrub(snippet) != snippet]
    altered, total = [], 0
    for path in library_files() if files is None else files:
        source = read_source(path)
        if source is None:
            continue
        total += 1
        cleaned = scrub(source)
        if cleaned != source:
            altered.append((path, sorted(set(_kinds(cleaned)))))
    caught = sum(count[0] for count in per_kind.values())
    return Figures(caught / len(samples), {kind: (c, t) for kind, (c, t) in per_kind.items()}, misses,
                   innocent_altered, altered, total)


def _kinds(text: str) -> list[str]:
    import re

    return re.findall(r"\[REDACTED:([a-z0-9-]+)\]", text)


def scrub_milliseconds(scrub: Callable[[str], object], text: str, runs: int = 15) -> float:
    """The fastest of `runs` scrubs of `text` (the fastest: other processes share the machine)."""
    import time

    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        scrub(text)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def bodies() -> dict[str, str]:
    """50 KB bodies to time: code, prose (the README) and a dense mix of the corpus' secrets."""
    root = Path(__file__).resolve().parent.parent
    code = "".join(path.read_text(encoding="utf-8") for path in sorted((root / "scripts" / "_lib").rglob("*.py")))
    prose = (root / "README.md").read_text(encoding="utf-8")
    secrets = "\n".join(sample.text for sample in positives())
    return {name: (text * (50_000 // len(text) + 1))[:50_000] for name, text in
            (("code", code), ("prose", prose), ("secrets on every line", secrets))}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from _lib.base import redact

    figures = measure(lambda text: redact.scrub(text)[0])
    print(figures.report())
    print(f"contexts: {len(set(sample.context for sample in positives()))}")
    for name, body in bodies().items():
        print(f"scrub of a 50 KB body ({name}): {scrub_milliseconds(redact.scrub, body):.1f} ms")
    if "-v" in sys.argv:
        for sample in figures.misses:
            print("MISS", sample.kind, repr(sample.text[:160]))
        for snippet in figures.innocent_altered:
            print("ALTERED SNIPPET", repr(snippet), "->", repr(redact.scrub(snippet)[0]))
        for path, kinds in figures.files_altered:
            print("ALTERED FILE", path, kinds)


if __name__ == "__main__":
    main()
