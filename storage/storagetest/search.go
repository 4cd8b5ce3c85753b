package storagetest

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"testing"
	"time"

	"svc/storage"
)

func jobID() [16]byte {
	var id [16]byte
	rand.Read(id[:])
	return id
}

// SearchJobs checks a storage.SearchJobs implementation: tenant scoping,
// epoch-guarded terminal writes, cancel, stale claims, result paging and
// reaping.
func SearchJobs(t *testing.T, newStore func(t *testing.T) storage.SearchJobs) {
	ctx := context.Background()
	base := time.Now().UTC().Truncate(time.Millisecond)
	mk := func(t *testing.T, s storage.SearchJobs, tenant string, hb time.Time) *storage.SearchJob {
		j := &storage.SearchJob{Tenant: tenant, ID: jobID(), Model: storage.ModelKey{Name: "m", Version: 2},
			Condition: []byte(`{"type":"group","operator":"AND","conditions":[]}`), Sort: []string{"a:desc"},
			At: base, Status: storage.JobRunning, CreatedAt: hb, Heartbeat: hb, Epoch: 1}
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	t.Run("lifecycle", func(t *testing.T) {
		s := newStore(t)
		j := mk(t, s, "t1", base)
		got, err := s.GetJob(ctx, "t1", j.ID)
		if err != nil || got.Status != storage.JobRunning || got.Model != j.Model || string(got.Condition) != string(j.Condition) ||
			len(got.Sort) != 1 || !got.At.Equal(base) || got.Epoch != 1 {
			t.Fatalf("get: %+v %v", got, err)
		}
		if _, err := s.GetJob(ctx, "t2", j.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("other tenant: %v", err)
		}
		// One call for several jobs: held only where tenant, id and
		// epoch all match a RUNNING job; each miss leaves the job as it was.
		other := mk(t, s, "t1", base)
		beats := []storage.JobBeat{
			{Tenant: "t1", ID: j.ID, Epoch: 1},
			{Tenant: "t1", ID: j.ID, Epoch: 2},
			{Tenant: "t2", ID: other.ID, Epoch: 1},
			{Tenant: "t1", ID: jobID(), Epoch: 1},
			{Tenant: "t1", ID: other.ID, Epoch: 1},
		}
		if held, err := s.Heartbeat(ctx, beats, base.Add(time.Second)); err != nil || !slices.Equal(held, []bool{true, false, false, false, true}) {
			t.Fatalf("heartbeat: %v %v", held, err)
		}
		if got, _ := s.GetJob(ctx, "t1", j.ID); !got.Heartbeat.Equal(base.Add(time.Second)) {
			t.Fatalf("heartbeat not stamped: %v", got.Heartbeat)
		}
		if held, err := s.Heartbeat(ctx, []storage.JobBeat{{Tenant: "t1", ID: j.ID, Epoch: 2}}, base.Add(time.Hour)); err != nil || held[0] {
			t.Fatalf("heartbeat at a foreign epoch: %v %v", held, err)
		}
		if got, _ := s.GetJob(ctx, "t1", j.ID); !got.Heartbeat.Equal(base.Add(time.Second)) {
			t.Fatalf("a foreign epoch stamped the job: %v", got.Heartbeat)
		}
		if held, err := s.Heartbeat(ctx, nil, base); err != nil || len(held) != 0 {
			t.Fatalf("empty heartbeat: %v %v", held, err)
		}
		stale := *j
		stale.Epoch = 7
		stale.Status = storage.JobSuccessful
		if err := s.Finish(ctx, &stale, nil); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("finish at a foreign epoch: %v", err)
		}
		ids := [][16]byte{jobID(), jobID(), jobID()}
		fin := *j
		fin.Status, fin.Count, fin.FinishedAt, fin.CalcMillis = storage.JobSuccessful, 3, base.Add(time.Second), 12
		if err := s.Finish(ctx, &fin, ids); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(ctx, &fin, ids); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("second finish: %v", err)
		}
		page, err := s.Results(ctx, "t1", j.ID, 1, 5)
		if err != nil || len(page) != 2 || page[0] != ids[1] || page[1] != ids[2] {
			t.Fatalf("results page: %v %v", page, err)
		}
		if page, _ := s.Results(ctx, "t1", j.ID, 3, 5); len(page) != 0 {
			t.Fatalf("page past the end: %v", page)
		}
		got, _ = s.GetJob(ctx, "t1", j.ID)
		if got.Status != storage.JobSuccessful || got.Count != 3 || got.CalcMillis != 12 || !got.FinishedAt.Equal(fin.FinishedAt) {
			t.Fatalf("finished job %+v", got)
		}
		if after, err := s.Cancel(ctx, "t1", j.ID, base); !errors.Is(err, storage.ErrConflict) || after == nil || after.Status != storage.JobSuccessful {
			t.Fatalf("cancel terminal: %+v %v", after, err)
		}
		if _, err := s.Cancel(ctx, "t2", j.ID, base); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("cancel by other tenant: %v", err)
		}
		k := mk(t, s, "t1", base)
		if after, err := s.Cancel(ctx, "t1", k.ID, base.Add(time.Minute)); err != nil || after.Status != storage.JobCancelled || after.FinishedAt.IsZero() {
			t.Fatalf("cancel running: %+v %v", after, err)
		}
		if held, err := s.Heartbeat(ctx, []storage.JobBeat{{Tenant: "t1", ID: k.ID, Epoch: 1}}, base); err != nil || held[0] {
			t.Fatalf("heartbeat after cancel: %v %v", held, err)
		}
		if err := s.DeleteJob(ctx, "t2", k.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("delete by other tenant: %v", err)
		}
		if err := s.DeleteJob(ctx, "t1", k.ID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("stale and reap", func(t *testing.T) {
		s := newStore(t)
		old := mk(t, s, "t1", base.Add(-time.Hour))
		fresh := mk(t, s, "t1", base)
		claimed, err := s.ClaimStale(ctx, base.Add(-time.Minute), base, 10)
		if err != nil || len(claimed) != 1 || claimed[0].ID != old.ID || claimed[0].Epoch != 2 || claimed[0].StaleClaims != 1 {
			t.Fatalf("claim: %+v %v", claimed, err)
		}
		if again, _ := s.ClaimStale(ctx, base.Add(-time.Minute), base, 10); len(again) != 0 {
			t.Fatalf("claimed twice: %+v", again)
		}
		// The old executor's epoch is dead.
		fin := *old
		fin.Status, fin.FinishedAt = storage.JobFailed, base
		if err := s.Finish(ctx, &fin, nil); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("finish by the lost executor: %v", err)
		}
		fin.Epoch = 2
		if err := s.Finish(ctx, &fin, nil); err != nil {
			t.Fatal(err)
		}
		n, err := s.Reap(ctx, base.Add(time.Second))
		if err != nil || n != 1 {
			t.Fatalf("reap: %d %v", n, err)
		}
		if _, err := s.GetJob(ctx, "t1", old.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("reaped job: %v", err)
		}
		if _, err := s.GetJob(ctx, "t1", fresh.ID); err != nil {
			t.Fatalf("running job reaped: %v", err)
		}
	})
}

// Messages checks a storage.Messages implementation.
func Messages(t *testing.T, newStore func(t *testing.T) storage.Messages) {
	ctx := context.Background()
	s := newStore(t)
	m := &storage.Message{Tenant: "t1", ID: jobID(), Header: []byte(`{"subject":"s","contentType":"a/b"}`),
		MetaData: []byte(`{"k":1}`), Content: []byte(`{"b":2,"a":1}`), CreatedAt: time.Now().UTC()}
	if err := s.PutMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.PutMessage(ctx, m); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second put: %v", err)
	}
	got, err := s.GetMessage(ctx, "t1", m.ID)
	if err != nil || string(got.Header) != string(m.Header) || string(got.MetaData) != string(m.MetaData) || string(got.Content) != string(m.Content) {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := s.GetMessage(ctx, "t2", m.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant: %v", err)
	}
	if err := s.DeleteMessage(ctx, "t2", m.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete by other tenant: %v", err)
	}
	if err := s.DeleteMessages(ctx, "t2", [][16]byte{m.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetMessage(ctx, "t1", m.ID); err != nil {
		t.Fatalf("batch delete by other tenant removed it: %v", err)
	}
	if err := s.DeleteMessage(ctx, "t1", m.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMessage(ctx, "t1", m.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	a, b := *m, *m
	a.ID, b.ID = jobID(), jobID()
	for _, x := range []*storage.Message{&a, &b} {
		if err := s.PutMessage(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteMessages(ctx, "t1", [][16]byte{a.ID, jobID()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetMessage(ctx, "t1", a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("batch-deleted message: %v", err)
	}
	if _, err := s.GetMessage(ctx, "t1", b.ID); err != nil {
		t.Fatalf("untouched message: %v", err)
	}
}
