"""``zl backends``: every backend found, who registered it, and which plugins failed
to load, broke (a hook raised) or were disabled.

Every hook of every backend is asked once with harmless arguments first, so a
plugin whose hooks raise shows here as broken instead of in the middle of a
campaign."""

from __future__ import annotations

import argparse
import json
from typing import Any

from zl_core.app import plugin_host
from zl_core.app.inventory import backends_listing


def add_parser(sub) -> None:
    p = sub.add_parser("backends", help="list installed backends and plugins that failed or broke",
                       description="List every backend found through the 'zl' entry points: its "
                                   "aliases, the package that registered it, its capabilities, and "
                                   "every plugin that failed to load, broke (one of its hooks "
                                   "raised) or was disabled, with the reason.")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=run)


def _capability_text(caps: dict[str, Any]) -> str:
    parts = [f"graph_capture={'yes' if caps['graph_capture'] else 'no'}"]
    if caps.get("capture_deny"):
        parts.append(f"capture_deny={','.join(caps['capture_deny'])}")
    for key in ("vendor", "torch_namespace", "default_switch"):
        parts.append(f"{key}={caps.get(key) or '-'}")
    parts.append(f"visibility={','.join(caps['visibility_env_keys']) or '-'}")
    if caps.get("compile_targets"):  # what --compile-only --target takes, and its default
        parts.append(f"compile_targets={caps['compile_targets']}"
                     + (f" default={caps['compile_target_default']}" if caps.get("compile_target_default") else ""))
    return "  ".join(parts)


def render(listing: dict[str, Any]) -> list[str]:
    lines = []
    if not listing["backends"]:
        lines.append("no backend is installed; pip install the zl-backend-<vendor> package "
                     "of your accelerator")
    for b in listing["backends"]:
        aliases = f" (aliases: {', '.join(b['aliases'])})" if b["aliases"] else ""
        origin = f"{b['package']} {b['version']}".strip()
        lines.append(f"{b['name']}{aliases}  [{origin}]" + (f"  {b['description']}" if b["description"] else ""))
        lines.append(f"    {_capability_text(b['capabilities'])}")
    broken = [p for p in listing["plugins"] if p["status"] != "loaded"]
    if broken:
        lines.append("")
        lines.append("plugins not in use (failed: at import; broken: a hook raised):")
        for p in broken:
            origin = f"{p['package']} {p['version']}".strip()
            lines.append(f"  {p['name']} [{origin}] {p['status']}: {p['reason']}")
    for problem in listing["problems"]:
        lines.append(f"note: {problem}")
    return lines


def run(args: argparse.Namespace) -> int:
    listing = backends_listing(plugin_host())
    if args.json:
        print(json.dumps(listing, indent=2))
    else:
        print("\n".join(render(listing)))
    return 0
