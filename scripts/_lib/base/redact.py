"""Secrets never reach a memory file: redact them (or refuse the write) on every write path.

Detected (each replaced by a visible placeholder such as `[REDACTED:github-token]`):

- tokens with a known shape: private key blocks, AWS access key ids, GitHub, GitLab,
  Slack (tokens and webhooks), Google API keys and OAuth client secrets, Stripe,
  OpenAI-style `sk-` keys, Anthropic, Hugging Face, npm, PyPI and SendGrid tokens, JWTs;
- credentials by their context: passwords in URLs (`redis://:pw@host`), assignments of a
  name holding password/secret/token/key/credential in any case and spacing
  (`.env`, `export`, YAML, JSON, XML, INI, code, URL queries, `--password x` flags,
  `the password is x`), Basic and Bearer authorisation headers, and passwords given
  to command-line tools (`mysql -pPASS`, `sshpass -p`, `curl -u user:pass`, ...);
- unlabelled random strings: 40-character AWS secret keys and any token of 32 to 200
  characters with the mix, alternation and entropy of generated base62/base64.

Left alone: code that reads a secret from somewhere (`os.environ['DB_PASSWORD']`,
`getpass()`, `config.password`), references and placeholders (`${DB_PASSWORD}`, `$PASSWORD`,
`<password>`, `***`, `changeme`, `your-api-key`, `scott:tiger`), type annotations, digests
(hex, UUIDs, `sha512-...` integrity strings, `sha256=` records), identifiers, paths, public
keys and certificates. `<private>...</private>` spans are dropped whole.
`redaction.mode: refuse` turns any finding into an error instead.

Every pattern is linear (bounded repetitions, no quantifier inside another) and starts with
a literal, or runs only where a cheap substring marker shows it could match: a 50 KB body
is scrubbed in a few milliseconds. tests/secrets_corpus.py measures recall and false positives.
"""

from __future__ import annotations

import bisect
import functools
import math
import re

from . import errors
from .text import LazyPattern as _Lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

PRIVATE_SPAN = _Lazy(r"<private>.*?</private>", re.S | re.I)
UNCLOSED_PRIVATE = _Lazy(r"<private>.*\Z", re.S | re.I)
PLACEHOLDER = _Lazy(r"\[REDACTED:[a-z0-9-]+\]")

# A value given in quotes or bare; _unquoted() narrows a quoted match to its content.
_VALUE = r"""(?P<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"'`]{1,200})"""
_B64 = r"[A-Za-z0-9+/]"
_SHELL_STOP = r"[^\n|;&]{0,200}?"  # the rest of one shell command, lazily

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

# (kind, lower-case markers of which one must occur (none: the pattern's literal start is as quick
# to search for), pattern, characters that may not come just before a match). The secret is the
# group named "secret..." when the pattern has one, else the whole match. Earlier detectors win
# overlaps. The character before a match is checked in Python rather than with a look-behind,
# which would make the regex engine try every position instead of searching for the literal.
# A pattern starting with (?i) is tried only where one of its markers occurs.
_PATTERNS: list[tuple[str, tuple[str, ...], str, str]] = [
    # AKIA long-term, ASIA temporary; AIDA, AROA and the like are ids of users and roles, not credentials
    ("aws-access-key", ("akia", "asia", "abia", "acca"),
     r"(?:AKIA|ASIA|ABIA|ACCA)(?![A-Z0-9]{9}EXAMPLE)[A-Z0-9]{16}(?![A-Za-z0-9])", _ALNUM),
    ("github-token", (), r"gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])",
     _ALNUM + "_"),
    ("github-token", (), r"github_pat_[A-Za-z0-9_]{22,255}", _ALNUM + "_"),
    ("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"),
     r"gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,255}", _ALNUM + "_-"),
    ("slack-webhook", (),
     r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,255}", ""),
    ("slack-token", (), r"xox[abposre]-[A-Za-z0-9-]{10,255}", _ALNUM),
    ("google-api-key", (), r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", _ALNUM + "_-"),
    ("google-client-secret", (), r"GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])", _ALNUM + "_-"),
    ("stripe-key", ("_live_", "_test_"), r"[sr]k_(?:live|test)_[0-9A-Za-z]{16,255}(?![A-Za-z0-9_])", _ALNUM + "_"),
    ("stripe-key", (), r"whsec_[0-9A-Za-z]{24,255}(?![A-Za-z0-9_])", _ALNUM + "_"),
    ("anthropic-key", (), r"sk-ant-[A-Za-z0-9_-]{20,255}", _ALNUM + "_-"),
    ("openai-key", (), r"sk-(?:proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_-]{20,255})", _ALNUM + "_-"),
    ("huggingface-token", (), r"hf_[A-Za-z0-9]{30,255}(?![A-Za-z0-9_])", _ALNUM + "_"),
    ("npm-token", (), r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])", _ALNUM + "_"),
    ("pypi-token", (), r"pypi-AgE[A-Za-z0-9_-]{50,500}", _ALNUM + "_-"),
    ("sendgrid-key", (), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", _ALNUM + "_.-"),
    ("jwt", (), r"eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{0,2000}", _ALNUM + "_-"),
    # scheme://user:password@host; the scheme is not needed to know a password is there
    ("url-password", (), r"://[^\s:/@\"'<>]{0,100}:(?P<secret>[^\s:@/\"'<>]{1,200})@(?=[A-Za-z0-9\[])", ""),
    ("auth-header", ("basic", "bearer"),
     r"(?i)(?P<scheme>basic|bearer)\s{1,5}(?P<secret>[A-Za-z0-9._~+/-]{6,2000}={0,2})(?![A-Za-z0-9._~+/=-])", _ALNUM),
    ("auth-header", ("authorization",),
     r"(?i)authorization[\"']?\s{0,3}[:=]\s{0,3}[\"']?token\s{1,5}(?P<secret>[A-Za-z0-9._~+/-]{6,2000}={0,2})"
     r"(?![A-Za-z0-9._~+/=-])", _ALNUM),
    # passwords given to command-line tools
    ("cli-password", ("mysql", "mariadb", "7z"),
     r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump|7z|7za)\b" + _SHELL_STOP +
     r"\s-p(?P<secret>[^\s\"'`]{1,200}|\"[^\"\n]{1,200}\"|'[^'\n]{1,200}')", _ALNUM + "_-"),
    ("cli-password", (), r"sshpass\b" + _SHELL_STOP + r"\s-p\s{0,3}" + _VALUE, _ALNUM + "_-"),
    ("cli-password", (),
     r"curl\b" + _SHELL_STOP + r"\s(?:-u|--user)[\s=]{0,3}[\"']?[^\s:\"'$]{1,100}:(?P<secret>[^\s\"'`]{1,200})",
     _ALNUM + "_-"),
    ("cli-password", (), r"redis-cli\b" + _SHELL_STOP + r"\s-a\s{1,3}" + _VALUE, _ALNUM + "_-"),
    ("cli-password", (), r"ldap[a-z]{3,10}\b" + _SHELL_STOP + r"\s-w\s{1,3}" + _VALUE, _ALNUM + "_-"),
    ("cli-password", (), r"sqlcmd\b" + _SHELL_STOP + r"\s-P\s{1,3}" + _VALUE, _ALNUM + "_-"),
    ("cli-password", (), r"docker\s{1,3}login\b" + _SHELL_STOP + r"\s-p\s{1,3}" + _VALUE, _ALNUM + "_-"),
    ("cli-password", (), r"zip\b" + _SHELL_STOP + r"\s-P\s{1,3}" + _VALUE, _ALNUM + "_-"),
    ("cli-password", (),
     r"smbclient\b" + _SHELL_STOP + r"\s-U\s{0,3}[^\s%]{1,100}%(?P<secret>[^\s\"']{1,200})", _ALNUM + "_-"),
    ("cli-password", ("storepass", "keypass"), r"-(?:src|dest)?(?:store|key)pass\s{1,3}" + _VALUE, ""),
    ("cli-password", (), r"pass:" + _VALUE, _ALNUM + "_-"),
]

# The last resort: a long token of the base64 alphabet, checked by _looks_random.
_TOKEN = _Lazy(r"(?<![A-Za-z0-9/+_=-])[A-Za-z0-9/+_=-]{32,}(?![A-Za-z0-9/+_=-])")
_TOKEN_MAX = 200  # longer runs are data (embedded images, session blobs), not a key someone pasted

# Public PEM blocks and public keys: base64 that is published on purpose.
_PUBLIC_BEGIN = _Lazy(r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|PGP PUBLIC KEY BLOCK|X509 CRL|"
                           r"(?:NEW )?CERTIFICATE REQUEST|TRUSTED CERTIFICATE|DH PARAMETERS|EC PARAMETERS)-----")
_PUBLIC_END = _Lazy(r"-----END [A-Z0-9 ]{1,40}-----")
_SSH_PUBLIC = _Lazy(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com) AAAA"
                         r"[A-Za-z0-9+/]{20,2000}={0,2}")

# Encoded data named just before a token: digests (go.sum `h1:`, docker `sha256:`), data URIs,
# MIME encoded words (`=?utf-8?b?...`).
_ENCODED_BEFORE = _Lazy(r"(?:(?:sha1|sha224|sha256|sha384|sha512|sha3|md5|blake2[bs]?|h1|crc32c?|etag)[-=:]\s?|"
                             r"base64,\s?|\?[bBqQ]\?)$", re.I)
_DIGEST_PREFIX = _Lazy(r"(?:sha1|sha224|sha256|sha384|sha512|md5)[-=]", re.I)


def literal_start(pattern: str) -> str:
    """The literal text every match of `pattern` starts with ('' when there is none to rely on:
    a leading group, class or flag, or an alternative at the top level)."""
    depth, index, in_class = 0, 0, False
    while index < len(pattern):  # an alternative at the top level: no common start
        char = pattern[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return ""
        index += 1
    start, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and pattern[index + 1:index + 2] in (".", "-", "/"):
            start.append(pattern[index + 1])
            index += 2
        elif char in ".^$*+?{}[]|()\\":
            if char in "*?{":  # the character before may be absent
                start = start[:-1]
            break
        else:
            start.append(char)
            index += 1
    return "".join(start)


@functools.lru_cache(maxsize=1)
def patterns() -> list[tuple[str, tuple[str, ...], _Lazy, str, str]]:
    """The detectors: (kind, markers, pattern, characters not before, literal start). Each is
    compiled when first tried, and tried only when its literal start or a marker occurs:
    compiling all of them costs a write several milliseconds."""
    return [(kind, markers, _Lazy(pattern), not_after, literal_start(pattern))
            for kind, markers, pattern, not_after in _PATTERNS]


class Finding:
    __slots__ = ("kind", "start", "end")

    def __init__(self, kind: str, start: int, end: int) -> None:
        self.kind, self.start, self.end = kind, start, end

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, {self.start}, {self.end})"


# -- values: placeholders, references and what a generated secret looks like ------------------------

_PLACEHOLDER_WORDS = frozenset("""
    password passwd pass pwd passphrase secret secrets token key apikey api_key api-key credentials credential
    changeme change_me change-me changeit example sample dummy fake test testing tests demo placeholder redacted
    hidden masked removed omitted none null nil undefined true false yes no empty unset missing required optional
    default xxx xxxx xxxxx xxxxxx xxxxxxxx foo bar baz foobar qux user username admin root guest tiger scott
    mypassword yourpassword my_password your_password my-password your-password mysecret yoursecret my_secret
    your_secret mytoken yourtoken my_token your_token mykey yourkey my_key your_key secret123 password123
    str string bytes int integer bool boolean float list dict object any text char varchar optional[str]
    secretstr secretbytes none_type nonetype
    """.split())
# What follows a password-like name in prose and docs rather than a password.
_PROSE_WORDS = frozenset("""
    is are was were be been the a an of for to in on and or if not with from by as at this that these those
    your my our their its his her must should will can may might could would shall does do did has have had
    required invalid incorrect wrong expired reset changed change protected authentication authenticated
    login logon prompt field fields input reset hash hashed hashes salted encrypted manager managers policy
    strength length based only here there below above again instead please enter provide
    """.split())
_REFERENCE = _Lazy(r"""^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$|\$[{(]|%\(|%[A-Za-z_][A-Za-z0-9_]*%$|@[A-Za-z_.]+@$|"""
                   r"""\{\{|<[^>]*>?$|\[[^\]]*\]?$|\(|\{|#\{|process\.env|os\.|env\.|ENV\[|"""
                   r"""self\.|this\.|config\.|settings\.|cfg\.|conf\.|args\.|options\.|opts\.|params\.|"""
                   r"""request\.|req\.|ctx\.|context\.|secrets\.|vault:|ssm:|arn:|op://|keyring:)""")
_MASKED = _Lazy(r"^(?:[*x•.#?-]{3,}|x{3,}.*|\*{3,}.*|.*\*{3,}|\.\.\.|…)$", re.I)
_PLACEHOLDER_PARTS = _Lazy(r"example|placeholder|changeme|change[-_]me|your[-_ ]?(?:own[-_ ]?)?(?:pass|secret|"
                           r"token|key|api|app|client|access|db|aws)|my[-_]?(?:pass|secret|token|api|access)|"
                           r"redacted|dummy|replace[-_ ]?me|insert[-_ ]|<|>|\{\{|\}\}|\$\{|%\(|%s\b|\{\}|"
                           r"^\{\w*\}$", re.I)
_IDENTIFIER = _Lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_CLASSES = (_Lazy(r"[a-z]"), _Lazy(r"[A-Z]"), _Lazy(r"[0-9]"), _Lazy(r"[^A-Za-z0-9]"))
_NOT_ALNUM = _Lazy(r"[^A-Za-z0-9]")


def _classes(value: str) -> int:
    return sum(bool(pattern.search(value)) for pattern in _CLASSES)


def _entropy(value: str) -> float:
    from collections import Counter

    return -sum(count / len(value) * math.log2(count / len(value)) for count in Counter(value).values())


def is_placeholder(value: str) -> bool:
    """A value that stands for a secret rather than being one: a reference, a mask, a stock example."""
    stripped = value.strip()
    return (len(stripped) < 3 or stripped.lower().strip("'\"`") in _PLACEHOLDER_WORDS
            or bool(_REFERENCE.match(stripped) or _MASKED.match(stripped) or _PLACEHOLDER_PARTS.search(stripped)))


def _word_like(value: str) -> bool:
    """Words joined by `-`, `_`, `.` or spaces with no digit: a name or a phrase, not generated."""
    return not any(char.isdigit() for char in value) and all(
        part.isalpha() and (part.islower() or part.istitle() or part.isupper())
        for part in re.split(r"[-_. ]+", value) if part)


def _generated(value: str) -> bool:
    """A token a service generated: mostly letters and digits, with digits or both cases, not words."""
    if len(value) < 8 or any(char.isspace() or char == "\\" for char in value) or _word_like(value):
        return False
    lower, upper, digit, _ = (bool(pattern.search(value)) for pattern in _CLASSES)
    alnum = len(value) - len(_NOT_ALNUM.findall(value))
    return alnum >= 0.6 * len(value) and (digit and (lower or upper) or lower and upper) and \
        not _mostly_words(value)


def _mostly_words(value: str) -> bool:
    """Identifiers, paths and prose: most characters sit in pronounceable runs of letters.

    Of generated base62/base64 tokens of 32 characters, 0.3% have over 60% of their
    characters in such runs (fewer of longer ones); most long identifiers and paths do."""
    in_words = 0
    for run in _WORD_RUN.findall(value):
        vowels = sum(char in "aeiouyAEIOUY" for char in run)
        if len(run) >= 3 and vowels and vowels >= 0.25 * len(run):
            in_words += len(run)
    return in_words > 0.6 * len(value)


def _looks_random(token: str) -> bool:
    """A long token with the character mix, alternation and entropy of a generated secret.

    Hex (commit hashes, checksums), UUIDs, one-case or digitless tokens, identifiers
    (`AbstractSingletonProxyFactoryBean2Impl`), paths and base64 of JSON are left alone.
    """
    core = token.rstrip("=")
    if not 32 <= len(core) <= _TOKEN_MAX or "=" in core or core.startswith("eyJ"):
        return False  # `=` inside is an assignment, not base64 padding; eyJ is base64 of a JSON object
    if not all(pattern.search(core) for pattern in _CLASSES[:3]):
        return False  # generated tokens of this length have lower case, upper case and digits
    if re.fullmatch(r"[0-9a-fA-F_-]+", core) or _mostly_words(core):
        return False
    worded = [part for part in re.split(r"[/_-]+", core) if len(part) >= 4 and _mostly_words(part)]
    if len(worded) >= 2 and sum(map(len, worded)) >= 0.5 * len(core):
        return False  # a path or a name of words and numbers: policy/SNS/CloudTrail-TopicPolicy-2014-12-17
    # generated base62/base64 switches between lower, upper and digit about 60% of the time;
    # identifiers and words switch once per word
    switches = len(_CLASS_RUN.findall(core)) - 1
    return switches >= 0.35 * (len(core) - 1) and _entropy(core) >= 4.1


_WORD_RUN = _Lazy(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])")
_CLASS_RUN = _Lazy(r"[a-z]+|[A-Z]+|[0-9]+|[^A-Za-z0-9]+")


# -- context: NAME = value ------------------------------------------------------------------------

# Words inside a name that may hold a credential (found in lower case); the whole name is then examined.
_NAME_WORDS = ("pass", "pwd", "pw", "secret", "token", "key", "cred", "auth")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_SEGMENTS = _Lazy(r"[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# The last word of a name that describes a credential instead of holding one.
_ABOUT = frozenset("""
    file files path paths env var vars variable name names url uri urls endpoint endpoints type types length len
    size count id ids prompt field fields hash hashed hashes digest policy policies regex re pattern patterns min max
    expiry expires expiration expired ttl timeout header headers dir directory location label hint placeholder
    format prefix suffix kind mode required enabled disabled set index idx pos start end char chars list map class
    cls factory provider source store storage manager handler validator validation error errors message msg text help
    desc description column col parser lexer stream generator reset changed input widget form strength rules version
    scheme algorithm alg method usage scope scopes audience issuer lifetime bucket arn fn func function callback
    helper helpers util utils spec specs schema key_id fingerprint fingerprints encoding encoder decoder len_ option
    options flag flags arg args param params parameter parameters attr attribute attributes property properties
    filter filters count_ table tables template templates reader writer cache cached command cmd exists check
    checker test tests mock mocks stub type_ lookup missing needed present ok valid invalid status state
""".split())
_PASSWORD_WORDS = ("password", "passwd", "passwrd", "passphrase", "pwd")
_TOKEN_ENDINGS = ("secret", "token", "apikey", "credential", "credentials", "auth", "authkey", "sessionid")
_TOKEN_SEGMENTS = frozenset(("secrets", "tokens", "authorization", "cookie", "bearer"))
_PASSWORD_SEGMENTS = frozenset(("pass", "pw", "pword", "pswd", "requirepass", "masterauth"))
# Words after the credential word that still name the credential: DB_PASSWORD_PROD, API_KEY_VALUE.
_NEUTRAL = frozenset("value val string str b64 base64 hex raw plain plaintext data bytes encoded new old current "
                     "prod production dev development staging stage live local default".split())


@functools.lru_cache(maxsize=4096)
def _name_class(name: str) -> str | None:
    """"password", "token" or "key" when `name` names a credential of that strength, else None."""
    segments = [segment.lower() for segment in _SEGMENTS.findall(name)]
    while len(segments) > 1 and (segments[-1] in _NEUTRAL or segments[-1].isdigit()):
        segments.pop()
    if not segments or segments[-1] in _ABOUT:
        return None
    last = segments[-1]  # the credential is what the name ends with: DB_PASSWORD, not PASSWORD_POLICY
    if any(word in last for word in _PASSWORD_WORDS) or last in _PASSWORD_SEGMENTS:
        return "pass" if len(segments) == 1 and last in ("pass", "pw") else "password"
    if last in _TOKEN_SEGMENTS or last.endswith(_TOKEN_ENDINGS):
        return "token"
    if last.endswith("key") or last == "keys":
        return "key"
    return None


def _unquoted(text: str, start: int, end: int) -> tuple[int, int]:
    if end - start >= 2 and text[start] in "\"'`" and text[end - 1] == text[start]:
        return start + 1, end - 1
    return start, end


_BARE_END = frozenset(" \t\r\n\"'`,;&<>()[]{}|")
_SEPARATORS = (":=", "=>", "<-", "=", ":", "|")
_LOOK = 200  # how far around a name its context is read (keeps every scan linear)
_MAX_NAME = 100


def _assignments(text: str, lower: str) -> Iterator[tuple[int, int]]:
    """Values given to credential names: `DB_PASSWORD=x`, `"token": "x"`, `--password x`, `password is x`."""
    length, seen = len(text), 0
    if len(lower) != length:  # a few characters change length in lower case: find the words in the text itself
        lower = "".join(char.lower() if len(char.lower()) == 1 else "?" for char in text)
    hits = sorted((index, index + len(word)) for word in _NAME_WORDS for index in _occurrences(lower, word))
    for hit_start, hit_end in hits:
        if hit_start < seen:
            continue  # another hit inside a name already examined
        start, end = hit_start, hit_end
        while start > 0 and text[start - 1] in _NAME_CHARS and hit_start - start < _MAX_NAME:
            start -= 1
        while end < length and text[end] in _NAME_CHARS and end - hit_end < _MAX_NAME:
            end += 1
        seen = end
        dashes = len(text[start:end]) - len(text[start:end].lstrip("-"))
        name = text[start + dashes:end].rstrip(".-")
        start, end = start + dashes, start + dashes + len(name)
        strength = _name_class(name)
        if strength is not None:
            found = _value_after(text, start, end, strength, flag=dashes > 0)
            if found is not None:
                yield found


def _value_after(text: str, name_start: int, name_end: int, strength: str, flag: bool) -> tuple[int, int] | None:
    """The span of the value assigned to the name at [name_start, name_end), if it is a secret."""
    before = text[name_start - 1] if name_start else ""
    cursor = name_end
    quoted_name = before in "\"'" and text[cursor:cursor + 1] == before
    if quoted_name:
        cursor += 1
        if text[cursor:cursor + 1] in ("]", ")"):  # environ["DB_PASSWORD"] = ..., setProperty("password", ...)
            cursor += 1
    gap = _spaces(text, cursor)
    cursor += gap
    if not gap and text[cursor:cursor + 1] not in (":", "=", "<", "|", ",", ">"):
        return None  # tokenizer(, api_key.strip(), key] ...: not an assignment
    if before == "<" and text[cursor:cursor + 1] == ">":  # <password>x</password>
        close = text.find("<", cursor + 1, cursor + _LOOK)
        if close == -1 or "\n" in text[cursor + 1:close]:
            return None
        return _accept(text, cursor + 1, close, strength, "xml")
    form = None
    for separator in _SEPARATORS:
        if text.startswith(separator, cursor):
            if separator in ("=", ":") and text[cursor + 1:cursor + 2] in ("=", ":", "/"):
                return None  # ==, ::, a URL's scheme
            if separator == "=" and text[cursor - 1:cursor] in ("!", "<", ">"):
                return None
            if separator == "|" and text[max(0, name_start - 3):name_start].strip(" ") != "|":
                return None  # only a table cell that is the name itself: | DB_PASSWORD | x |
            form = separator
            cursor += len(separator)
            break
    if form is None:
        attribute = _VALUE_ATTRIBUTE.match(text, cursor - gap, cursor - gap + 20) if quoted_name else None
        if attribute:  # <add key="DbPassword" value="x"/>
            form, cursor = "=", attribute.end()
        elif quoted_name and text[cursor:cursor + 1] == "," and \
                text[max(0, name_start - 3):name_start - 1].rstrip(" ").endswith("("):  # f("password", "x")
            form, cursor = ",", cursor + 1
        elif gap and text.startswith(("is ", "was "), cursor):
            form = "is"
            cursor = text.index(" ", cursor) + 1
            cursor += 1 if text[cursor:cursor + 1] == ":" else 0
        elif gap and (flag or _netrc_like(text, name_start) or name_start == 0 or text[name_start - 1] == "\n"):
            form = "space"
        else:
            return None
    cursor += _spaces(text, cursor)
    if text[cursor:cursor + 1] in ("b", "B", "r", "R", "u", "U") and text[cursor + 1:cursor + 2] in ("\"", "'"):
        cursor += 1  # a Python bytes or raw string literal
    quote = text[cursor:cursor + 1]
    if quote in ("\"", "'", "`"):
        close = text.find(quote, cursor + 1, cursor + _LOOK)
        if close == -1 or "\n" in text[cursor + 1:close]:
            return None
        return _accept(text, cursor + 1, close, strength, form + "-quoted")
    if form == ",":
        return None  # only a quoted argument is a value
    end = cursor
    while end < len(text) and end - cursor < _LOOK and text[end] not in _BARE_END:
        end += 1
    if text[end:end + 1] in ("(", "["):
        return None  # a call or an index: code computing the value
    if form in ("is", "space"):
        while end > cursor and text[end - 1] in ".,:;!?":
            end -= 1  # sentence punctuation
    rest = text[end:end + _LOOK].split("\n", 1)[0]
    if form == "|" or form == "=" and _env_style(text, name_start, name_end, rest):
        form = "env"
    elif form == "space" and _netrc_like(text, name_start):
        form = "netrc"
    return _accept(text, cursor, end, strength, form, line_ends=not rest.strip(" \t\r,;.:!?"))


def _spaces(text: str, index: int) -> int:
    count = 0
    while index + count < len(text) and text[index + count] in " \t" and count < 8:
        count += 1
    return count


def _line_before(text: str, index: int) -> str:
    return text[max(0, index - _LOOK):index].rsplit("\n", 1)[-1]


_ENV_LEADS = ("export", "ENV", "env", "set", "SET", "setenv", "-", "-e", "--env", "declare -x", "readonly", "local",
              "$env:", "--build-arg", "-D", "sudo", "&&", ";", "|", "(")
_PAIR = _Lazy(r"[A-Za-z_][\w.-]{0,60}=")
_VALUE_ATTRIBUTE = _Lazy(r"\s{1,3}value\s{0,3}=")
_PAIR_AFTER = _Lazy(r"\s+[A-Za-z_][\w.-]*=[^\s=]")


def _env_style(text: str, name_start: int, name_end: int, rest: str) -> bool:
    """`NAME=value` in shell, .env, INI, DSN and log syntax: unindented at the start of a line
    (code is indented and spaced: `password = value`), after `export`, `-e`, `ENV` and the
    like, among other `key=value` pairs, in a URL query or a `;` list."""
    lead = _line_before(text, name_start)
    stripped = lead.strip()
    if not lead:
        return text[name_end:name_end + 1] == "=" or text[name_end:name_end + 3] == " = " and \
            text[name_start:name_end].isupper()  # .env: DB_PASSWORD=x; spaced only for an upper-case name
    return stripped in _ENV_LEADS or stripped.endswith(tuple(" " + word for word in _ENV_LEADS) + ("?", "&", ";")) \
        or bool(stripped and lead[-1:].isspace() and all(_PAIR.match(word) for word in lead.split())) \
        or bool(_PAIR_AFTER.match(rest))


def _netrc_like(text: str, name_start: int) -> bool:
    """`machine x login bob password hunter2`, `ENV DB_PASSWORD x`: space-separated config files."""
    lead = _line_before(text, name_start).split()
    return bool(lead) and (lead[-1] == "ENV" or len(lead) >= 2 and lead[-2] == "login")


_ENGLISH_ENDINGS = ("ed", "ing", "able", "ible", "ly", "tion", "ment", "ness", "ful", "less", "ous", "ive")


def _accept(text: str, start: int, end: int, strength: str, form: str,
            line_ends: bool = True) -> tuple[int, int] | None:
    """[start, end) when the value there, given to a name of `strength` in syntax `form`, is a secret."""
    value = text[start:end]
    if not value.strip() or is_placeholder(value) or PLACEHOLDER.search(value):
        return None
    quoted = form.endswith("-quoted") or form == "xml"
    if _IDENTIFIER.fullmatch(value.replace("-", "_")) and not any(char.isdigit() for char in value) and (
            re.search(r"[-_]|[a-z][A-Z]", value) and _name_class(value) or "password" in value.lower() or
            value.isupper() and "_" in value):
        return None  # password=password, API_KEY=DEFAULT_API_KEY, "no-password-required": names, not values
    if not quoted and form not in ("env", "netrc") and "." in value and \
            all(_IDENTIFIER.fullmatch(part) for part in value.split(".")):
        return None  # settings.SECRET_KEY, self.password, hpke.PrivateKey: code reading the value
    if strength == "key":
        return (start, end) if len(value) >= 16 and _generated(value) else None
    if strength == "token":
        return (start, end) if len(value) >= 10 and _generated(value) else None
    if strength == "pass":  # `pass` alone is also a keyword and a filter band: a password must show it
        return (start, end) if _classes(value) >= 2 and " " not in value and (quoted or form == "env") else None
    # a password: people choose words, so fewer rules on the value and more on the syntax around it
    if form == ",-quoted":  # f("password", "x"): a default or a setting, never a phrase
        return (start, end) if " " not in value and (_classes(value) >= 2 or len(value) >= 6) else None
    if quoted or form in ("env", "netrc"):
        return (start, end)
    lower = value.lower()
    if lower in _PROSE_WORDS:
        return None
    if form in ("=", ":=", "=>", "<-"):  # code: f(password=x) passes a variable unless x has a digit
        return None if _IDENTIFIER.fullmatch(value) and not any(char.isdigit() for char in value) else (start, end)
    if not line_ends and not (form == "space" and _classes(value) >= 3):
        return None  # `password: the user's password`, `password is stored in ...`: prose goes on
    if _classes(value) >= 2 and len(value) >= 4:
        return (start, end)
    # one plain word ending a line or sentence: `password: hunter`, `the pwd is anchorsilver.`
    return (start, end) if len(value) >= 6 and value.isalpha() and value.islower() and \
        not lower.endswith(_ENGLISH_ENDINGS) else None


# -- the detectors together -------------------------------------------------------------------------

def _basic_credentials(value: str) -> bool:
    """A Basic authorisation value: base64 of `user:password`."""
    import base64  # only for such a value: not on every write's import path
    import binascii

    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


_PRIVATE_BEGIN = _Lazy(r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_END = _Lazy(r"-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY = _Lazy(r"[A-Za-z0-9+/=]{16,}")
_KEY_LINE = _Lazy(r"[ \t]*(?:[A-Za-z0-9+/=]{4,}|[A-Za-z-]{2,40}: [^\n]*)?[ \t]*\r?")


def _private_keys(text: str) -> Iterator[tuple[int, int]]:
    """PEM and PGP private key blocks: BEGIN to END, or to the last line of the key when cut short.
    A BEGIN line not followed by key material (prose naming the marker) is left alone."""
    ends = [match.end() for match in _PRIVATE_END.finditer(text)]
    for begin in _PRIVATE_BEGIN.finditer(text):
        if not _KEY_BODY.search(text, begin.end(), begin.end() + 300):
            continue
        following = bisect.bisect_left(ends, begin.end())
        if following < len(ends):
            yield begin.start(), ends[following]
            continue
        cursor = end = begin.end()
        while cursor < len(text) and text[cursor] == "\n":
            line_end = text.find("\n", cursor + 1)
            line_end = len(text) if line_end == -1 else line_end
            if not _KEY_LINE.fullmatch(text, cursor + 1, line_end):
                break
            cursor = end = line_end
        yield begin.start(), end


def _matches(pattern: _Lazy, markers: tuple[str, ...], not_after: str, text: str,
             lower: str) -> Iterator[re.Match[str]]:
    """The pattern's matches not preceded by a character of `not_after`; a case-insensitive
    pattern is tried only where one of its markers occurs."""
    if pattern.pattern.startswith("(?i)") and len(lower) == len(text):
        starts = sorted(index for marker in markers for index in _occurrences(lower, marker))
        found: Iterator[re.Match[str] | None] = (pattern.match(text, index) for index in starts)
    else:
        found = pattern.finditer(text)
    for match in found:
        if match and not (match.start() and text[match.start() - 1] in not_after):
            yield match


def _occurrences(text: str, word: str) -> Iterator[int]:
    index = text.find(word)
    while index != -1:
        yield index
        index = text.find(word, index + 1)


def _public_keys(text: str, lower: str) -> Iterator[tuple[int, int]]:
    """Certificates and public keys, whose base64 is published on purpose."""
    if "-----begin" in lower:
        ends = [match.end() for match in _PUBLIC_END.finditer(text)]
        for begin in _PUBLIC_BEGIN.finditer(text):
            following = bisect.bisect_left(ends, begin.end())
            if following < len(ends):
                yield begin.start(), ends[following]
    if "ssh-" in lower or "ecdsa-" in lower:
        yield from (match.span() for match in _SSH_PUBLIC.finditer(text))


def _pattern_spans(kind: str, matches: Iterator[re.Match[str]], text: str) -> Iterator[tuple[int, int]]:
    for match in matches:
        group = next((name for name, value in match.groupdict().items() if value is not None and
                      name.startswith("secret")), None)
        start, end = _unquoted(text, *(match.span(group) if group else match.span()))
        value = text[start:end]
        if kind == "openai-key" and not (_classes(match.group("body")) >= 3 or
                                         re.fullmatch(r"[0-9a-f]{32,}", match.group("body"))):
            continue  # sk-learn-... is a package, not a key
        if kind == "huggingface-token" and _classes(value[3:]) < 3:
            continue
        if kind == "auth-header":
            basic = (match.groupdict().get("scheme") or "").lower() == "basic"
            if not (_basic_credentials(value) if basic else _generated(value)):
                continue
        if kind in ("url-password", "cli-password") and is_placeholder(value) and value.lower() != "pw":
            continue
        yield start, end


def _long_tokens(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the runs of 32+ characters of the base64 alphabet. Splitting on whitespace first
    leaves the regex only the few long words: scanning all the text with it costs milliseconds."""
    cursor = 0
    for word in [word for word in text.split() if len(word) >= 32]:
        position = text.find(word, cursor)
        cursor = position + len(word)
        for match in _TOKEN.finditer(word):
            yield position + match.start(), position + match.end()


def findings(text: str) -> Iterator[Finding]:
    """Every secret in `text` (overlaps resolved: the earlier detector, then the earlier match wins)."""
    lower = text.lower()
    starts: list[int] = []  # the spans taken so far: disjoint, sorted by start
    ends: list[int] = []

    def take(start: int, end: int) -> bool:
        index = bisect.bisect_right(starts, start)
        if start >= end or index and ends[index - 1] > start or index < len(starts) and starts[index] < end:
            return False
        starts.insert(index, start)
        ends.insert(index, end)
        return True

    def claim(kind: str, spans: Iterator[tuple[int, int]]) -> Iterator[Finding]:
        for start, end in spans:
            if not PLACEHOLDER.fullmatch(text[start:end]) and take(start, end):
                yield Finding(kind, start, end)

    if "private key" in lower:
        yield from claim("private-key", _private_keys(text))
    public = list(_public_keys(text, lower))
    for kind, markers, pattern, not_after, literal in patterns():
        if literal in text and (not markers or any(marker in lower for marker in markers)):
            yield from claim(kind, _pattern_spans(kind, _matches(pattern, markers, not_after, text, lower), text))
    yield from claim("password", _assignments(text, lower))
    for start, end in public:  # published keys and certificates are not secrets, nor random strings to hide
        take(start, end)
    for start, end in _long_tokens(text):
        token = text[start:end]
        if _DIGEST_PREFIX.match(token) or not _looks_random(token) or \
                _ENCODED_BEFORE.search(text[max(0, start - 8):start]) or \
                "/" in token and _URL_BEFORE.search(text[max(0, start - _LOOK):start]) or \
                _in_data_block(text, start, end):
            continue  # a digest (sha512-..., sha256=...), a URL's path, lines of an encoded file
        kind = "aws-secret-key" if len(token) == 40 and re.fullmatch(_B64 + "{40}", token) else "high-entropy-string"
        yield from claim(kind, iter([(start, end)]))


_URL_BEFORE = _Lazy(r"://[^\s\"'<>]*$|(?:^|\s)[\w.-]+\.[a-z]{2,6}/[^\s]*$")
_BASE64_LINE = _Lazy(r"[ \t]*(?:[bB]?[\"']{1,3})?([A-Za-z0-9+/]{4,}={0,2})[\"']{0,3}[ \t]*")
_WRAP_WIDTHS = (60, 64, 72, 76)


def _in_data_block(text: str, start: int, end: int) -> bool:
    """Whether the token is a line of wrapped base64 (an encoded file, not a key): a neighbouring
    line of base64 of the same length, or of any length next to a line of a usual wrap width."""
    line_start = text.rfind("\n", max(0, start - _LOOK), start) + 1
    line_end = text.find("\n", end, end + _LOOK)
    line_end = len(text) if line_end == -1 else line_end
    line = _BASE64_LINE.fullmatch(text[line_start:line_end])
    if end - start < 48 or not line:
        return False
    width = len(line.group(1))
    previous_end = max(0, line_start - 1)
    previous = text[text.rfind("\n", max(0, previous_end - _LOOK), previous_end) + 1:previous_end]
    following_end = text.find("\n", line_end + 1, line_end + 1 + _LOOK)
    following = text[line_end + 1:len(text) if following_end == -1 else following_end]
    for neighbour in (previous, following):
        match = _BASE64_LINE.fullmatch(neighbour)
        if match and (len(match.group(1)) == width or width in _WRAP_WIDTHS or
                      neighbour is previous and len(match.group(1)) in _WRAP_WIDTHS):
            return True  # the same width, or the first or last line of a block wrapped at a usual width
    return False


def kinds_in(text: str) -> list[str]:
    """The kinds of secret in `text` (health scans every memory with it)."""
    return list(dict.fromkeys(finding.kind for finding in findings(text)))


# Redaction is repeated on its own result (a secret glued to another one shows once the first is
# gone), so that scrubbing twice gives what scrubbing once did: the todo capture relies on it.
_PASSES = 4


def scrub(text: str, mode: str = "redact", what: str = "content") -> tuple[str, list[str]]:
    """`text` with private spans dropped and secrets replaced; also the kinds found.

    With mode "refuse", a secret raises InvalidInput instead (private spans are still dropped).
    """
    text = PRIVATE_SPAN.sub("[REDACTED:private]", text)
    text = UNCLOSED_PRIVATE.sub("[REDACTED:private]", text)
    kinds: list[str] = []
    for _ in range(_PASSES):
        found = sorted(findings(text), key=lambda finding: finding.start)
        if not found:
            break
        kinds += [finding.kind for finding in found]
        if mode == "refuse":
            raise errors.InvalidInput(
                f"the {what} contains what looks like a secret ({', '.join(dict.fromkeys(kinds))})",
                "remove it, wrap it in <private>...</private>, or set redaction.mode to redact")
        pieces, cursor = [], 0
        for finding in found:
            pieces += [text[cursor:finding.start], f"[REDACTED:{finding.kind}]"]
            cursor = finding.end
        pieces.append(text[cursor:])
        text = "".join(pieces)
    return text, list(dict.fromkeys(kinds))


def clean(workspace: Any, value: str, what: str = "content") -> str:
    """`scrub` with the workspace's `redaction.mode`, reporting what was redacted as a warning."""
    cleaned, kinds = scrub(value, workspace.config.get("redaction.mode", "redact"), what)
    if kinds:
        workspace.warn(f"redacted from the {what}: {', '.join(kinds)} (a [REDACTED:...] marker is kept)")
    return cleaned


def clean_values(workspace: Any, value: Any, what: str = "frontmatter") -> Any:
    """`clean` applied to every string inside `value` (lists and mappings included), each judged
    with its key as the label: `{"password": "hunter2"}` loses the password even though
    `hunter2` alone is not recognisable. A mapping key that itself looks like a secret is
    refused (InvalidInput): a redacted key would be a different field.

    This is the call for any structured record written to disk: frontmatter fields, JSON
    files under the memory directory, a whole task (`redact.clean_values(workspace, task, "task")`).
    """
    mode = workspace.config.get("redaction.mode", "redact")
    found: list[str] = []
    cleaned = _clean_tree(value, None, mode, what, found)
    if found:
        workspace.warn(f"redacted from the {what}: {', '.join(dict.fromkeys(found))} (a [REDACTED:...] marker is kept)")
    return cleaned


def _clean_tree(value: Any, key: Any, mode: str, what: str, found: list[str]) -> Any:
    if isinstance(value, str):
        cleaned, kinds = scrub_labelled(value, key, mode, what)
        found.extend(kinds)
        return cleaned
    if isinstance(value, list):
        return [_clean_tree(item, key, mode, what, found) for item in value]
    if isinstance(value, dict):
        for name in value:
            if isinstance(name, str):
                require_clean(name, f"{what} key", "rename the field; keep credentials out of memory")
        return {name: _clean_tree(item, name, mode, what, found) for name, item in value.items()}
    return value


def scrub_labelled(value: str, label: Any, mode: str = "redact", what: str = "content") -> tuple[str, list[str]]:
    """`scrub` for a value stored under `label` (a field or key name): under a credential name
    such as `password` or `apiToken`, the whole value is the secret unless it is a placeholder."""
    cleaned, kinds = scrub(value, mode, what)
    strength = _name_class(label) if isinstance(label, str) else None
    if kinds or not strength or "\n" in value or _accept(value, 0, len(value), strength, "=-quoted") is None:
        return cleaned, kinds
    if mode == "refuse":
        raise errors.InvalidInput(f"the {what} field {label!r} holds what looks like a secret (password)",
                                  "remove it, or set redaction.mode to redact")
    return "[REDACTED:password]", ["password"]


def require_clean(text: str, what: str, hint: str) -> str:
    """`text` unchanged, or InvalidInput when it holds a secret: for names (tags, slugs, keys,
    settings) where a redaction marker would make no sense. The secret is not repeated."""
    kinds = kinds_in(text)
    if kinds:
        raise errors.InvalidInput(f"the {what} looks like a secret ({', '.join(kinds)}); nothing was written", hint)
    return text
