package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
)

// A second server on a data directory in use, on another port and another
// database, exits at once naming the PID of the server that holds it, and
// leaves its admin token alone.
func TestDataDirectoryLocked(t *testing.T) {
	singleServer(t, "it starts a second server process on the first one's data directory")
	f := setup(t)
	data := filepath.Join(f.dir, "data")
	tokenFile := filepath.Join(data, auth.AdminTokenFile)
	before, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "server", "--data", data, "--db", "sqlite:"+filepath.Join(f.dir, "other.db"), "--listen", freePort(t))
	cmd.Env = append(os.Environ(), envServerProcess+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || ctx.Err() != nil {
		t.Fatalf("a second server on the same data directory: %v (it should exit at once)\n%s", err, stderr.String())
	}
	if want := "PID " + strconv.Itoa(os.Getpid()); !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "in use") {
		t.Errorf("the second server's refusal does not name %s:\n%s", want, stderr.String())
	}
	if after, _ := os.ReadFile(tokenFile); !bytes.Equal(before, after) {
		t.Error("the second server overwrote the first one's admin token")
	}
	// The first still answers with its token.
	if _, err := f.client.Whoami(context.Background()); err != nil {
		t.Errorf("the first server after the second was refused: %v", err)
	}
}

// A server on a new database and a data directory whose admin.token holds
// another store's token leaves the file alone and says so.
func TestAdminTokenNeverOverwritten(t *testing.T) {
	singleServer(t, "it starts servers of its own on SQLite")
	f := setup(t)
	data := filepath.Join(f.dir, "data")
	tokenFile := filepath.Join(data, auth.AdminTokenFile)
	before, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	f.stop()
	err = NewServer(ServerConfig{Data: data, DB: "sqlite:" + filepath.Join(f.dir, "fresh.db"), Listen: "127.0.0.1:0", Logger: nopLogger()}).Start(context.Background())
	if !errors.Is(err, auth.ErrTokenFileExists) || !strings.Contains(err.Error(), tokenFile) {
		t.Errorf("a fresh store on a data directory with an admin token: %v, want the file named and left alone", err)
	}
	if after, _ := os.ReadFile(tokenFile); !bytes.Equal(before, after) {
		t.Error("admin.token was overwritten")
	}
	// The lock was given back: the first store's server starts again.
	f.start()
	if _, err := f.client.Whoami(context.Background()); err != nil {
		t.Errorf("the first server started again: %v", err)
	}
}
