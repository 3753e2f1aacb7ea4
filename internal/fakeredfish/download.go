package fakeredfish

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// probe HEADs image, as a BMC does before it mounts one, and returns its
// size. The words never carry the URL (it may hold a token).
func probe(ctx context.Context, c MediaConfig, image string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, min(c.Timeout, 15*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, image, nil)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return 0, fmt.Errorf("the image is not an http or https URL")
	}
	resp, err := c.Client.Do(req)
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) {
		return 0, fmt.Errorf("the certificate of the image's server %s is not trusted", req.URL.Host)
	}
	if err != nil {
		return 0, fmt.Errorf("cannot reach the image's server %s", req.URL.Host)
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("the image's server answered HTTP %d", resp.StatusCode)
	case resp.ContentLength <= 0:
		return 0, fmt.Errorf("the image's server gave no size")
	case resp.ContentLength > c.MaxBytes:
		return 0, fmt.Errorf("the image is %d bytes, over %d", resp.ContentLength, c.MaxBytes)
	case resp.Header.Get("Accept-Ranges") != "bytes":
		return 0, errNoRanges
	}
	return resp.ContentLength, nil
}

// download reads image into f in ranges of c.RangeBytes, c.Ranges at
// once; a range is tried twice. It ends at the first range that fails
// for good, or when ctx does.
func (s *Server) download(ctx context.Context, c MediaConfig, m *medium, image string, size int64, f *os.File) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := (size + c.RangeBytes - 1) / c.RangeBytes
	var (
		mu    sync.Mutex
		next  int64
		first error
		wg    sync.WaitGroup
	)
	for range min(int64(c.Ranges), n) {
		wg.Go(func() {
			for {
				mu.Lock()
				k := next
				next++
				stop := first != nil || k >= n
				mu.Unlock()
				if stop {
					return
				}
				a := k * c.RangeBytes
				b := min(a+c.RangeBytes, size) - 1
				err := s.fetchRange(ctx, c, m, image, a, b, f)
				if err != nil {
					err = s.fetchRange(ctx, c, m, image, a, b, f)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// fetchRange GETs bytes a to b of image and writes them at a.
func (s *Server) fetchRange(ctx context.Context, c MediaConfig, m *medium, image string, a, b int64, f *os.File) error {
	s.mu.Lock()
	m.flight++
	m.parallel = max(m.parallel, m.flight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		m.flight--
		s.mu.Unlock()
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, image, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", a, b))
	resp, err := c.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("download stopped: %w", ctx.Err())
		}
		return fmt.Errorf("range %d-%d: cannot reach the image's server", a, b)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return fmt.Errorf("range %d-%d: HTTP %d, want 206: %w", a, b, resp.StatusCode, errNoRanges)
	}
	if cr := resp.Header.Get("Content-Range"); !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-%d/", a, b)) {
		return fmt.Errorf("range %d-%d: Content-Range %q", a, b, cr)
	}
	buf := make([]byte, b-a+1)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		return fmt.Errorf("range %d-%d: %w", a, b, err)
	}
	if _, err := f.WriteAt(buf, a); err != nil {
		return err
	}
	s.mu.Lock()
	m.ranges++
	s.mu.Unlock()
	return nil
}
