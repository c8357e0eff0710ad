# network-controller's image: the two static binaries of `make build` in an
# empty image, as a non-root user. `make image` builds them first and then
# this, with docker where a Docker engine runs and podman elsewhere; the
# binaries are reproducible (-trimpath, no cgo, no build ID), so both tools
# make the same image from the same commit. FROM scratch needs no registry:
# the binaries carry their root CAs (golang.org/x/crypto/x509roots/fallback).
#
#   make image    # = make build && docker|podman build -t "$(make -s image-name)" .
FROM scratch
# One image, two programs: the controller (the default) and the webhook
# (artifacts/injector runs it with command: ["/envoy-injector"]).
COPY bin/network-controller /network-controller
COPY bin/envoy-injector /envoy-injector
USER 65532:65532
ENTRYPOINT ["/network-controller"]
