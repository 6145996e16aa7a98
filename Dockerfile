# Build a static switchboard binary (pure Go: no cgo, SQLite included).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The commit `switchboard version` prints: docker build --build-arg SWITCHBOARD_COMMIT=$(git rev-parse HEAD) .
ARG SWITCHBOARD_COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X github.com/switchboard/switchboard/internal/app.Commit=${SWITCHBOARD_COMMIT}" \
      -o /out/switchboard ./cmd/switchboard \
 && mkdir -p /out/data /out/media && chmod 2775 /out/media

# distroless "nonroot": uid/gid 65532, no shell. The working directory is a
# writable /data, so the zero-configuration SQLite default
# (sqlite:data/switchboard.db plus its secret.key) works without a database URL.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/switchboard /switchboard
COPY --from=build --chown=65532:65532 /out/data /data
# The media library (compose mounts its volume here and on FreeSWITCH): a
# new volume takes this owner and mode, setgid so that what FreeSWITCH
# writes (voicemail, faxes, recordings; its umask is 0002) stays in group
# 65532 and writable by Switchboard.
COPY --from=build --chown=65532:65532 /out/media /media
WORKDIR /data
VOLUME /data
USER 65532:65532
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["/switchboard", "health"]
ENTRYPOINT ["/switchboard"]
CMD ["serve"]
