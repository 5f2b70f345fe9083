#!/usr/bin/python3
# A slotctl for the check tests that enforces its config the way the platform's does:
# "slotctl LAUNCHER ARGS..." runs LAUNCHER only when the working folder is at or below one of
# allowed_cwd and LAUNCHER (its real path) matches one of allowed_exec; otherwise it says why
# on stderr and exits 126, as the platform's slotctl does.  It reads /etc/slots/slotctl.json,
# the fixture's slotctl_config.
import fnmatch
import json
import os
import sys

REFUSED = 126


def refuse(what):
    sys.stderr.write("slotctl: %s\n" % what)
    sys.exit(REFUSED)


def at_or_below(path, folder):
    folder = folder.rstrip("/") or "/"
    return folder == "/" or path == folder or path.startswith(folder + "/")


def main():
    path = "/etc/slots/slotctl.json"
    try:
        with open(path) as f:
            conf = json.load(f)
    except (OSError, ValueError) as e:
        refuse("cannot read its config %s: %s" % (path, e))
    if len(sys.argv) < 2:
        refuse("usage: slotctl LAUNCHER ARGS...")
    try:
        cwd = os.getcwd()
    except OSError as e:
        refuse("cannot tell its working folder: %s" % e)
    if not any(at_or_below(cwd, d) for d in conf.get("allowed_cwd", [])):
        refuse("%s is outside the allowed folders" % cwd)
    prog = os.path.realpath(sys.argv[1])
    if not any(fnmatch.fnmatchcase(prog, p) for p in conf.get("allowed_exec", [])):
        refuse("%s is not an allowed program" % sys.argv[1])
    try:
        os.execv(sys.argv[1], sys.argv[1:])
    except OSError as e:
        refuse("cannot run %s: %s" % (sys.argv[1], e))


main()
