#!/usr/bin/env bash
# Best effort, called by `make test`: install podman and debootstrap (Debian's packages) so the
# container tests can build the image. Never fails the build: without root or apt, or when
# the install fails, the container tests skip and say why. TRAFKA_SKIP_CONTAINER=1 skips this.
set -u
[ -n "${TRAFKA_SKIP_CONTAINER:-}" ] && { echo "setup_podman: TRAFKA_SKIP_CONTAINER is set"; exit 0; }
command -v podman >/dev/null && command -v debootstrap >/dev/null && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup_podman: WARNING: podman/debootstrap missing and not root with apt-get; container tests will skip"
    exit 0
fi
echo "setup_podman: apt-get install podman debootstrap"
export DEBIAN_FRONTEND=noninteractive
install() { timeout 600 apt-get install -y -q podman debootstrap >/tmp/trafka-setup-podman.log 2>&1; }
install || { timeout 300 apt-get update -q >>/tmp/trafka-setup-podman.log 2>&1; install; } || {
    echo "setup_podman: WARNING: apt-get install failed (log: /tmp/trafka-setup-podman.log); container tests will skip"
}
exit 0
