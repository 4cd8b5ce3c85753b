package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// taskTable holds the scheduled tasks of an Entities store. Commit changes
// it while holding the partition locks of its writes (lock order:
// partitions, then mu), so a task armed with an entity revision becomes
// visible with it, and a conditional delete is checked before anything of
// the transaction is applied. Readers take mu only.
type taskTable struct {
	mu       sync.Mutex
	m        map[taskKey]*storage.ScheduledTask
	// byEntity lists each entity's task ids; an entity has a few.
	byEntity map[entityKey][]string
}

type taskKey struct{ tenant, id string }

type entityKey struct {
	tenant string
	id     [16]byte
}

// Tasks returns the scheduled-task reader of the store.
func (s *Entities) Tasks() storage.ScheduledTasks { return (*tasksView)(s) }

type tasksView Entities

// checkTasks reports whether tx's conditional deletes still hold; the
// caller holds t.mu.
func (t *taskTable) checkTasks(tx *storage.Tx) bool {
	for i := range tx.Tasks {
		op := &tx.Tasks[i]
		if !op.Delete || op.IfArmTx == ([16]byte{}) {
			continue
		}
		cur := t.m[taskKey{tx.Tenant, op.Task.ID}]
		if cur == nil || cur.ArmTx != op.IfArmTx {
			return false
		}
	}
	return true
}

// applyTasks applies tx.Tasks in order; the caller holds t.mu and has
// checked them.
func (t *taskTable) applyTasks(tx *storage.Tx) {
	if t.m == nil {
		t.m = map[taskKey]*storage.ScheduledTask{}
		t.byEntity = map[entityKey][]string{}
	}
	for i := range tx.Tasks {
		op := &tx.Tasks[i]
		k := taskKey{tx.Tenant, op.Task.ID}
		if op.Delete {
			if cur := t.m[k]; cur != nil {
				delete(t.m, k)
				t.unlist(entityKey{tx.Tenant, cur.EntityID}, k.id)
			}
			continue
		}
		nt := op.Task
		nt.Tenant, nt.User, nt.ArmTx, nt.RedispatchAfter = tx.Tenant, tx.User, tx.ID, time.Time{}
		if nt.TimeoutMs != nil {
			v := *nt.TimeoutMs
			nt.TimeoutMs = &v
		}
		old := t.m[k]
		if old != nil && old.EntityID != nt.EntityID {
			t.unlist(entityKey{tx.Tenant, old.EntityID}, k.id)
		}
		t.m[k] = &nt
		if old == nil || old.EntityID != nt.EntityID {
			ek := entityKey{tx.Tenant, nt.EntityID}
			t.byEntity[ek] = append(t.byEntity[ek], k.id)
		}
	}
}

func (t *taskTable) unlist(ek entityKey, id string) {
	ids := t.byEntity[ek]
	for i, x := range ids {
		if x == id {
			ids[i] = ids[len(ids)-1]
			ids = ids[:len(ids)-1]
			break
		}
	}
	if len(ids) == 0 {
		delete(t.byEntity, ek)
		return
	}
	t.byEntity[ek] = ids
}

func copyTask(t *storage.ScheduledTask) storage.ScheduledTask {
	c := *t
	if t.TimeoutMs != nil {
		v := *t.TimeoutMs
		c.TimeoutMs = &v
	}
	return c
}

func (v *tasksView) EntityTasks(ctx context.Context, tenant string, entityID [16]byte) ([]storage.ScheduledTask, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &v.tasks
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.byEntity[entityKey{tenant, entityID}]
	out := make([]storage.ScheduledTask, 0, len(ids))
	for _, id := range ids {
		out = append(out, copyTask(t.m[taskKey{tenant, id}]))
	}
	return out, nil
}

func (v *tasksView) GetTask(ctx context.Context, tenant, id string) (*storage.ScheduledTask, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &v.tasks
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.m[taskKey{tenant, id}]
	if cur == nil {
		return nil, storage.ErrNotFound
	}
	c := copyTask(cur)
	return &c, nil
}

// ClaimDue scans every task: the memory engine serves one process, whose
// scheduler claims under the same lock, so there is no second claimer to
// skip.
func (v *tasksView) ClaimDue(ctx context.Context, now, until time.Time, limit int) ([]storage.ScheduledTask, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	t := &v.tasks
	t.mu.Lock()
	defer t.mu.Unlock()
	var due []*storage.ScheduledTask
	for _, cur := range t.m {
		if !cur.ScheduledTime.After(now) && !cur.RedispatchAfter.After(now) {
			due = append(due, cur)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].ScheduledTime.Before(due[j].ScheduledTime) })
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]storage.ScheduledTask, len(due))
	for i, cur := range due {
		cur.RedispatchAfter = until
		out[i] = copyTask(cur)
	}
	return out, nil
}
