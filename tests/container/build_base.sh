#!/usr/bin/env bash
# Build a local Debian bookworm base image with python3 for the trafka Dockerfile
# (`--build-arg BASE=localhost/trafka-base:bookworm`), for machines that reach Debian's
# package mirror but no image registry. Cached: does nothing when the image exists.
#
#   tests/container/build_base.sh [IMAGE]      (default localhost/trafka-base:bookworm)
#
# Needs root, podman and debootstrap. Env: CONTAINERS_CONF (see tests/container/podman.py),
# DEBIAN_MIRROR (default: the first deb.debian.org-style URI apt uses here), CACHE_DIR.
set -euo pipefail

IMAGE="${1:-localhost/trafka-base:bookworm}"
if podman image exists "$IMAGE"; then
    echo "build_base: $IMAGE exists, reusing it"
    exit 0
fi

CACHE_DIR="${CACHE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/.cache/container}"
MIRROR="${DEBIAN_MIRROR:-}"
if [ -z "$MIRROR" ]; then
    MIRROR="$(grep -hoE '^URIs: *[^ ]+/debian$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}')"
    [ -n "$MIRROR" ] || MIRROR="$(grep -hoE '^deb +[^ ]+/debian ' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')"
    [ -n "$MIRROR" ] || MIRROR="http://deb.debian.org/debian"
fi

mkdir -p "$CACHE_DIR"
ROOTFS="$(mktemp -d "$CACHE_DIR/base-rootfs.XXXXXX")"
trap 'rm -rf "$ROOTFS"' EXIT

start=$(date +%s)
# minbase: essential packages and apt only; python3-venv brings ensurepip so the image
# installs trafka into its own venv (Debian's python3 is "externally managed").
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$ROOTFS" "$MIRROR" >"$CACHE_DIR/debootstrap.log" 2>&1 || {
    echo "build_base: debootstrap failed; its log:" >&2
    tail -30 "$CACHE_DIR/debootstrap.log" >&2
    exit 1
}
# Trim what a runtime image never needs.
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/*
tar -C "$ROOTFS" -c . | podman import --change 'CMD ["python3"]' - "$IMAGE" >/dev/null
echo "build_base: built $IMAGE in $(( $(date +%s) - start ))s"
