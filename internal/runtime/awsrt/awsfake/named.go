package awsfake

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
)

// named is what the Secrets Manager and SSM fakes share: values by name,
// one read operation over them, and a count of the reads, so a test can
// see a value is read once per cold start.
type named[V any] struct {
	*httptest.Server

	mu     sync.Mutex
	values map[string]V // by name
	reads  int
}

// serveNamed starts a fake of the AWS JSON 1.1 service prefix whose one
// operation op decodes its input and answers with answer, under the fake's
// lock, each call counted; it is closed when the test ends.
func serveNamed[V, In any](t testing.TB, prefix, op string, answer func(values map[string]V, in In) (any, *apiError)) *named[V] {
	f := &named[V]{values: map[string]V{}}
	f.Server = httptest.NewServer(jsonService{version: "1.1", prefix: prefix, ops: map[string]func(context.Context, []byte) (any, *apiError){
		op: func(_ context.Context, body []byte) (any, *apiError) {
			var in In
			if err := decode(body, &in); err != nil {
				return nil, err
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.reads++
			return answer(f.values, in)
		},
	}})
	t.Cleanup(f.Close)
	return f
}

func (f *named[V]) put(name string, v V) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values[name] = v
}

// Reads is how many read calls (GetSecretValue, GetParameter) the fake
// answered.
func (f *named[V]) Reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}
