"""The JAAS lines Kafka brokers read their PLAIN users from.

`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin"
password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";` — each
`user_NAME="PASSWORD"` option is one user PLAIN accepts.
"""

from __future__ import annotations

import re

from trafka.broker.config import ConfigError

_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;"]+)')
_HEAD = re.compile(r"\s*([A-Za-z0-9_.$]+)\s+(required|requisite|sufficient|optional)\b", re.IGNORECASE)


def parse_jaas(text: str, setting: str = "sasl.jaas.config") -> list[tuple[str, dict[str, str]]]:
    """[(login module class, {option: value})] for each `Module flag options;` entry."""
    entries = []
    rest = text.strip()
    while rest:
        head = _HEAD.match(rest)
        if head is None:
            raise ConfigError(f"invalid value for {setting}: expected 'LoginModuleClass required key=\"value\" ...;'")
        rest = rest[head.end():]
        options: dict[str, str] = {}
        while True:
            option = _OPTION.match(rest)
            if option is None:
                break
            value = option.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            options[option.group(1)] = value
            rest = rest[option.end():]
        rest = rest.lstrip()
        if not rest.startswith(";"):
            raise ConfigError(f"invalid value for {setting}: each login module entry ends with ';'")
        rest = rest[1:].strip()
        entries.append((head.group(1), options))
    return entries


def plain_users(text: str, setting: str = "sasl.jaas.config") -> dict[str, str]:
    users: dict[str, str] = {}
    for _module, options in parse_jaas(text, setting):
        users.update({name[5:]: password for name, password in options.items() if name.startswith("user_")})
    return users
