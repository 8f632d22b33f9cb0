package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoTriagesAReport starts `signoff demo`, files a public report to
// its sample game project, and sees the triage crew take it: the case ends
// triaged (or parked at the human gate), through the real job queue.
func TestDemoTriagesAReport(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "--addr", "127.0.0.1:0", "--dir", t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	var banner strings.Builder
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		banner.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Press Ctrl-C") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	text := banner.String()
	url := regexp.MustCompile(`server\s+(http://\S+)`).FindStringSubmatch(text)
	token := regexp.MustCompile(`token: (so_\S+)`).FindStringSubmatch(text)
	projects := regexp.MustCompile(`/api/v1/projects/(prj_[0-9a-z]+)/reports`).FindAllStringSubmatch(text, -1)
	if url == nil || token == nil || len(projects) < 2 {
		t.Fatalf("demo banner:\n%s", text)
	}
	body := `{"text":"The game crashes every time I open the shop from level select","device":"Pixel 8","os":"Android 15","app_version":"2.4.1"}`
	resp, err := http.Post(url[1]+"/api/v1/projects/"+projects[1][1]+"/reports", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		CaseID string `json:"case_id"`
	}
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if resp.StatusCode != 201 || rep.CaseID == "" {
		t.Fatalf("report: %d %+v", resp.StatusCode, rep)
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url[1]+"/api/v1/cases/"+rep.CaseID+"/triage", nil)
		req.Header.Set("Authorization", "Bearer "+token[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			Run struct{ Status, Outcome string } `json:"run"`
		}
		json.NewDecoder(resp.Body).Decode(&tr)
		resp.Body.Close()
		if tr.Run.Status == "parked" || tr.Run.Status == "done" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("report never triaged (last %d %+v)", resp.StatusCode, tr.Run)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
