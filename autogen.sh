#!/bin/sh
# Generates configure and Makefile.in from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --force --install --warnings=all
echo "Now run ./configure (or configure from a build folder) and make."
