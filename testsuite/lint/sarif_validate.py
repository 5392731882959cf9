#!/usr/bin/python3
"""sarif_validate.py - checks SARIF logs against the SARIF 2.1.0 JSON schema
shipped in testsuite/data/sarif (see its README for the origin).

usage: sarif_validate.py SCHEMA FILE...
Exit status 0 when every FILE is valid, 1 otherwise (each error printed).
Needs Debian's python3-jsonschema; its absence is a failure, not a skip.
"""
import json
import sys

import jsonschema


def main():
    schema = json.load(open(sys.argv[1], encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        log = json.load(open(path, encoding="utf-8"))
        for err in sorted(validator.iter_errors(log), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in err.path)
            print(f"{path}: /{where}: {err.message}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
