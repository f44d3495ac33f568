package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// Retention in the watcher (issue 27): `git codex archive` keeps the tip
// small only if someone runs it, so the watcher runs it, through the
// registry as any caller would (audited, permission checked), once every
// --archive-every. When it last ran is read from the record archives
// (gitstate.LastRecordArchive: sync copies every machine's), not kept
// anywhere else, so a watcher restarted, or run from cron with --once, does
// not archive again within the interval, and one archive a day serves every
// machine of a team. It does nothing unless someone set retention.days (or
// a retention.<kind>.days) in the state's config: the 30-day default
// applies to `git codex archive` run by hand, never to records taken off
// the tip without anyone asking.

// retentionCheckEvery is how often the watcher looks again at the settings
// and the archives when it did not archive (the settings may have changed;
// another machine may have archived).
const retentionCheckEvery = time.Minute

// pathStateConfig is the state's config record (tools' pathConfig;
// docs/STATE.md).
const pathStateConfig = "config/config.json"

// retentionSettings are the retention.* keys set in the state's config
// (value JSON as set), none when retention is not configured.
func retentionSettings(sn *gitstate.Snapshot) (map[string]string, error) {
	var cfg struct {
		Entries map[string]struct {
			Value json.RawMessage `json:"value"`
		} `json:"entries"`
	}
	if err := sn.Get(pathStateConfig, &cfg); err != nil && !errors.Is(err, gitstate.ErrNotFound) {
		return nil, err
	}
	set := map[string]string{}
	for k, e := range cfg.Entries {
		v := strings.TrimSpace(string(e.Value))
		// a key config_unset cleared stays in the record, as null
		if strings.HasPrefix(k, "retention.") && v != "" && v != "null" {
			set[k] = v
		}
	}
	return set, nil
}

// retention runs archive when retention is configured and the newest
// record archive is older than --archive-every.
func (w *watcher) retention(ctx context.Context) {
	// in UTC, as archive's clock (the store's): days back are counted
	// the same way here and there, whatever a DST change in between
	now := time.Now().UTC()
	if w.opts.ArchiveEvery <= 0 || now.Before(w.nextRetention) {
		return
	}
	w.nextRetention = now.Add(retentionCheckEvery)
	var set map[string]string
	err := w.st.View(ctx, func(sn *gitstate.Snapshot) error {
		var err error
		set, err = retentionSettings(sn)
		return err
	})
	if err != nil {
		w.sayOnce("retention", "retention: "+err.Error())
		return
	}
	if len(set) == 0 {
		w.sayOnce("retention", "retention: not configured (git codex config set retention.days N): nothing archived")
		return
	}
	ref, at, ok, err := w.st.LastRecordArchive(ctx)
	if err != nil {
		w.sayOnce("retention", "retention: "+err.Error())
		return
	}
	if ok && now.Sub(at) < w.opts.ArchiveEvery {
		next := at.Add(w.opts.ArchiveEvery)
		w.nextRetention = next
		w.sayOnce("retention", fmt.Sprintf("retention: last archive %s at %s; next after %s", ref, at.Local().Format(time.DateTime), next.Local().Format(time.DateTime)))
		w.foldReads(ctx, now)
		return
	}
	res := w.e.reg.CallAs(ctx, w.st, w.origin, "archive", []byte("{}"))
	if ctx.Err() != nil {
		return
	}
	// once an interval, whether it archived or found nothing old enough
	w.nextRetention = now.Add(w.opts.ArchiveEvery)
	w.nextReadsFold = w.nextRetention // (archive folded this machine's reads)
	if res.Error != nil {
		w.say(fmt.Sprintf("archive failed: %s: %s", res.Error.Code, res.Error.Message))
		return
	}
	var out struct {
		Ref         string         `json:"ref"`
		Records     map[string]int `json:"records"`
		Total       int            `json:"total"`
		ReadsFolded []string       `json:"reads_folded"`
	}
	b, _ := json.Marshal(res.Data)
	json.Unmarshal(b, &out)
	w.say(archiveLine(set, out.Ref, out.Records, out.Total, len(out.ReadsFolded), w.opts.ArchiveEvery))
	delete(w.reported, "retention")
}

// archiveLine is the watcher's line for one archive run.
func archiveLine(set map[string]string, ref string, records map[string]int, total, folded int, every time.Duration) string {
	var settings []string
	for k, v := range set {
		settings = append(settings, k+"="+v)
	}
	sort.Strings(settings)
	line := "archive (" + strings.Join(settings, ", ") + "): "
	if total == 0 {
		line += "nothing old enough"
	} else {
		var parts []string
		for k, n := range records {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
		sort.Strings(parts)
		line += fmt.Sprintf("%d record(s) (%s) to %s", total, strings.Join(parts, ", "), ref)
	}
	if folded > 0 {
		line += fmt.Sprintf("; %d reads day(s) folded", folded)
	}
	return line + fmt.Sprintf("; next in %s", every)
}

// foldReads folds this machine's old reads days while the newest record
// archive is fresh. The archives say when retention last ran on any
// machine, and the records are the team's: one archive a day serves every
// machine. A machine's reads refs are its own, and archive folds only the
// reads of the machine it runs on, so a machine that always found another's
// archive fresh would never fold its own (issue 27). When this machine has
// reads days older than the setting (ReadsToFold), it runs archive for the
// kind reads alone, through the registry as any call: audited, and no
// record archive made. At most once an --archive-every per watcher.
func (w *watcher) foldReads(ctx context.Context, now time.Time) {
	if now.Before(w.nextReadsFold) {
		return
	}
	w.nextReadsFold = now.Add(w.opts.ArchiveEvery)
	cfg, err := tools.ConfigAt(ctx, w.st, w.e.reg.ConfigKeys())
	if err != nil {
		w.sayOnce("retention", "retention: "+err.Error())
		return
	}
	// as archive reads it (retentionDays in tools/work)
	days := cfg.IntValue("retention.reads.days")
	if days <= 0 {
		days = cfg.IntValue("retention.days")
	}
	old, err := w.st.ReadsToFold(ctx, now.AddDate(0, 0, -days), now)
	if err != nil {
		w.sayOnce("retention", "retention: "+err.Error())
		return
	}
	if len(old) == 0 {
		return
	}
	res := w.e.reg.CallAs(ctx, w.st, w.origin, "archive", []byte(`{"kinds":["reads"]}`))
	if ctx.Err() != nil {
		return
	}
	if res.Error != nil {
		w.say(fmt.Sprintf("archive of this machine's reads failed: %s: %s", res.Error.Code, res.Error.Message))
		return
	}
	var out struct {
		ReadsFolded []string `json:"reads_folded"`
	}
	b, _ := json.Marshal(res.Data)
	json.Unmarshal(b, &out)
	w.say(fmt.Sprintf("archive of this machine's reads (older than %d days): %d reads day(s) folded", days, len(out.ReadsFolded)))
}
