# network-controller's image: a static binary on distroless, as a non-root
# user. The build step is `make build`'s, so CI (which has no Docker engine)
# builds exactly what the image ships.
#
#   docker build -t "$(make -s image-name)" .
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first: a source change does not re-download them.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make build

FROM gcr.io/distroless/static-debian12:nonroot
# One image, two programs: the controller (the default) and the webhook
# (artifacts/injector runs it with command: ["/envoy-injector"]).
COPY --from=build /src/bin/network-controller /network-controller
COPY --from=build /src/bin/envoy-injector /envoy-injector
USER 65532:65532
ENTRYPOINT ["/network-controller"]
