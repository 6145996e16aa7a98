# Build a static switchboard binary (pure Go: no cgo, SQLite included).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/switchboard ./cmd/switchboard

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/switchboard /switchboard
EXPOSE 8080
ENTRYPOINT ["/switchboard"]
CMD ["serve"]
