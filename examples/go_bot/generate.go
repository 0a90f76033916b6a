package main

// `go generate` writes the protocol code into gen/ from ../../proto with protoc
// and the two Go plugins, built at the versions pinned in go.mod.
//go:generate go build -o .bin/ google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc
//go:generate mkdir -p gen
//go:generate protoc -I ../../proto --plugin=protoc-gen-go=.bin/protoc-gen-go --plugin=protoc-gen-go-grpc=.bin/protoc-gen-go-grpc --go_out=gen --go_opt=module=github.com/oddtrick/oddtrick/gen/go --go-grpc_out=gen --go-grpc_opt=module=github.com/oddtrick/oddtrick/gen/go oddtrick/v1/cards.proto oddtrick/v1/game.proto oddtrick/v1/referee.proto
