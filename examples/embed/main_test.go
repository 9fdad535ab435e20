package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestREADME checks that README.md shows this program as it is, and the
// output it prints, by running it.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	shown, after, ok := fenced(string(readme), "```go\n")
	if !ok || shown != string(src) {
		t.Fatalf("README.md's Go program is not examples/embed/main.go: copy the file into the README's go block")
	}
	output, _, ok := fenced(after, "```text\n")
	if !ok {
		t.Fatal("README.md shows no output after its Go program (a text block)")
	}
	var got bytes.Buffer
	if err := run(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != output {
		t.Errorf("the program printed\n%s\nREADME.md shows\n%s", got.String(), output)
	}
}

// fenced returns the text of the first block that opens with open, and
// what follows it.
func fenced(text, open string) (body, rest string, ok bool) {
	_, after, ok := strings.Cut(text, open)
	if !ok {
		return "", "", false
	}
	body, rest, ok = strings.Cut(after, "```\n")
	return body, rest, ok
}
