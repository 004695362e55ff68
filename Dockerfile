# syntax=docker/dockerfile:1
# The mcp-executor image: one static binary on a distroless, non-root base.
#
#   docker build --build-arg VERSION=0.1.0 -t mcp-executor:0.1.0 .
#
# To run a tool server inside the executor's container (the usual sidecar shape), build an image that
# adds the server on top of this one; see "Adding a tool server to the image" in the README.

ARG GO_VERSION=1.26
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/mcp-executor ./cmd/mcp-executor

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcp-executor /usr/local/bin/mcp-executor
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/mcp-executor"]
CMD ["help"]
