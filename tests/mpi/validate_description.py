#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""validate_description.py GMB_BENCH SCHEMA: `GMB_BENCH list --format json` validates against SCHEMA (engine.v1.json)."""
import json
import subprocess
import sys


def main() -> int:
    engine, schema_path = sys.argv[1:3]
    try:
        import jsonschema
    except ImportError:
        print("python3 module 'jsonschema' is missing (apt-get install python3-jsonschema)", file=sys.stderr)
        return 1
    out = subprocess.run([engine, "list", "--format", "json"], capture_output=True, text=True, check=True).stdout
    with open(schema_path) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    errors = sorted(validator.iter_errors(json.loads(out)), key=lambda e: list(e.absolute_path))
    for e in errors[:10]:
        print(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
