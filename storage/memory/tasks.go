package memory

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"svc/storage"
)

// taskTable holds the scheduled tasks of an Entities store. Commit changes
// it while holding the partition locks of its writes (lock order:
// partitions, then mu), so a task armed with an entity revision becomes
// visible with it, and a conditional delete is checked before anything of
// the transaction is applied. Readers take mu only.
//
// Tasks also sit in a min-heap by the instant they become claimable
// (their scheduled time, or their claim's end when later), so a scan
// costs O(batch · log n) however many tasks wait in the future.
type taskTable struct {
	mu sync.Mutex
	m  map[taskKey]*memTask
	// byEntity lists each entity's task ids; an entity has a few.
	byEntity map[entityKey][]string
	due      dueHeap
}

type taskKey struct{ tenant, id string }

type entityKey struct {
	tenant string
	id     [16]byte
}

type memTask struct {
	storage.ScheduledTask
	idx int // position in due
}

// claimable is when the task may be claimed next.
func (t *memTask) claimable() time.Time {
	if t.RedispatchAfter.After(t.ScheduledTime) {
		return t.RedispatchAfter
	}
	return t.ScheduledTime
}

// dueHeap orders tasks by claimable, then by scheduled time: a task never
// claimed ranks by its scheduled time (oldest first), a retried one by the
// end of its claim.
type dueHeap []*memTask

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	a, b := h[i].claimable(), h[j].claimable()
	if !a.Equal(b) {
		return a.Before(b)
	}
	return h[i].ScheduledTime.Before(h[j].ScheduledTime)
}
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *dueHeap) Push(x any) {
	t := x.(*memTask)
	t.idx = len(*h)
	*h = append(*h, t)
}
func (h *dueHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.idx = -1
	return t
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
		t.m = map[taskKey]*memTask{}
		t.byEntity = map[entityKey][]string{}
	}
	for i := range tx.Tasks {
		op := &tx.Tasks[i]
		k := taskKey{tx.Tenant, op.Task.ID}
		cur := t.m[k]
		if op.Delete {
			if cur != nil {
				delete(t.m, k)
				heap.Remove(&t.due, cur.idx)
				t.unlist(entityKey{tx.Tenant, cur.EntityID}, k.id)
			}
			continue
		}
		nt := op.Task
		nt.Tenant, nt.User, nt.ArmTx, nt.RedispatchAfter = tx.Tenant, tx.User, tx.ID, time.Time{}
		nt.UserKind = ""
		if tx.Attribution != nil {
			nt.UserKind = tx.Attribution.UserKind
		}
		if nt.TimeoutMs != nil {
			v := *nt.TimeoutMs
			nt.TimeoutMs = &v
		}
		if cur == nil {
			mt := &memTask{ScheduledTask: nt}
			t.m[k] = mt
			heap.Push(&t.due, mt)
			ek := entityKey{tx.Tenant, nt.EntityID}
			t.byEntity[ek] = append(t.byEntity[ek], k.id)
			continue
		}
		if cur.EntityID != nt.EntityID {
			t.unlist(entityKey{tx.Tenant, cur.EntityID}, k.id)
			ek := entityKey{tx.Tenant, nt.EntityID}
			t.byEntity[ek] = append(t.byEntity[ek], k.id)
		}
		cur.ScheduledTask = nt
		heap.Fix(&t.due, cur.idx)
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
		out = append(out, copyTask(&t.m[taskKey{tenant, id}].ScheduledTask))
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
	c := copyTask(&cur.ScheduledTask)
	return &c, nil
}

// ClaimDue takes the claimable tasks off the top of the heap. Claimers
// serialise on the table's lock, so none can take a task another stamped.
func (v *tasksView) ClaimDue(ctx context.Context, now, until time.Time, limit int) ([]storage.ScheduledTask, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &v.tasks
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []storage.ScheduledTask
	var taken []*memTask
	for len(out) < limit && t.due.Len() > 0 && !t.due[0].claimable().After(now) {
		mt := heap.Pop(&t.due).(*memTask)
		mt.RedispatchAfter = until
		taken = append(taken, mt)
		out = append(out, copyTask(&mt.ScheduledTask))
	}
	// Back in with their claim as the new key; pushed after the loop so
	// an until ≤ now cannot hand the same task out twice in one claim.
	for _, mt := range taken {
		heap.Push(&t.due, mt)
	}
	return out, nil
}
