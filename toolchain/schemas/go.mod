module sandbox-projects/toolchain/schemas

go 1.24

require (
	github.com/compose-spec/compose-go/v2 v2.16.2
	github.com/moby/moby/api v1.57.0
)

require (
	github.com/docker/go-units v0.5.0 // indirect
	github.com/moby/docker-image-spec v1.3.1 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.1 // indirect
	golang.org/x/text v0.14.0 // indirect
)
