package sdkcompare_test

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// heapObjects is the runtime metric the peak sampler reads: the bytes of
// heap objects, live or not yet collected. Reading it does not stop the
// world.
const heapObjects = "/memory/classes/heap/objects:bytes"

// samplePeriod is how often the peak sampler reads the heap.
const samplePeriod = time.Millisecond

// peakSampler follows the heap while something runs: a goroutine reads
// heapObjects every samplePeriod and keeps the largest value.
type peakSampler struct {
	stop, done chan struct{}
	sample     []metrics.Sample
	base, peak uint64 // peak is written by the goroutine until done
}

// startPeak collects garbage, reads the heap as the base, and starts
// sampling.
func startPeak() *peakSampler {
	runtime.GC()
	p := &peakSampler{
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		sample: []metrics.Sample{{Name: heapObjects}},
	}
	p.base = p.read()
	p.peak = p.base
	go func() {
		defer close(p.done)
		t := time.NewTicker(samplePeriod)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.observe()
			}
		}
	}()
	return p
}

func (p *peakSampler) read() uint64 {
	metrics.Read(p.sample)
	return p.sample[0].Value.Uint64()
}

func (p *peakSampler) observe() {
	if v := p.read(); v > p.peak {
		p.peak = v
	}
}

// end stops sampling, reads the heap once more, and returns the peak
// above the base.
func (p *peakSampler) end() uint64 {
	close(p.stop)
	<-p.done
	p.observe()
	return p.peak - p.base
}

// peakOf returns how far the heap rose above what it was before f ran:
// live objects and garbage not collected yet, with the collector at its
// default pace, i.e. what the process's heap reached.
func peakOf(f func() error) (uint64, error) {
	p := startPeak()
	err := f()
	return p.end(), err
}

// TestPeakSampler checks that the sampler sees memory allocated while it
// runs, and only what is above the base.
func TestPeakSampler(t *testing.T) {
	const size = 32 << 20
	held := make([]byte, 8<<20) // in the base
	p := startPeak()
	buf := make([]byte, size)
	buf[size-1] = 1
	got := p.end()
	runtime.KeepAlive(buf)
	runtime.KeepAlive(held)
	// The runtime's heap statistics are per-P and a little behind: a
	// margin of 1 MiB.
	if got < size-1<<20 || got > size+size/2 {
		t.Errorf("peak %d bytes above the base, want about %d", got, size)
	}
}
