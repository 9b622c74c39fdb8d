package avtalegiro

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kadens/kadens/internal/store"
)

const avgFileColumns = `id, account_id, direction, kind, transmission_number, sha256, transactions, created_at, submitted_at`

func scanAvgFile(r store.Scanner) (AvtaleGiroFile, error) {
	var (
		f         AvtaleGiroFile
		account   sql.NullString
		submitted sql.NullTime
	)
	err := r.Scan(&f.ID, &account, &f.Direction, &f.Kind, &f.TransmissionNumber, &f.SHA256, &f.Transactions, &f.CreatedAt, &submitted)
	if account.Valid {
		f.AccountID = &account.String
	}
	f.CreatedAt, f.SubmittedAt = f.CreatedAt.UTC(), fromNullTime(submitted)
	return f, err
}

// File returns file id (FileContent reads its bytes).
func File(ctx context.Context, st *store.Store, id string) (AvtaleGiroFile, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroFile{}, err
	}
	if !store.ValidID(id) {
		return AvtaleGiroFile{}, store.ErrNotFound
	}
	f, err := scanAvgFile(st.Reader().QueryRow(ctx, `SELECT `+avgFileColumns+` FROM avtalegiro_files
		WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return AvtaleGiroFile{}, fmt.Errorf("avtalegiro: file %s: %w", id, store.NotFound(err))
	}
	return f, nil
}

// FileContent returns a reader of file id's bytes that reads
// one chunk at a time (a query per chunk: no statement stays open while
// the caller writes to a slow client or a bank). A file that does not
// exist reads as store.ErrNotFound.
func FileContent(ctx context.Context, st *store.Store, id string) io.Reader {
	tenant, err := avgTenant(ctx)
	if err == nil && !store.ValidID(id) {
		err = store.ErrNotFound
	}
	return &avgFileReader{ctx: ctx, st: st, tenant: tenant, id: id, err: err}
}

type avgFileReader struct {
	ctx        context.Context
	st         *store.Store
	tenant, id string
	seq        int
	cur        []byte
	err        error
}

func (r *avgFileReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		err := r.st.Reader().QueryRow(r.ctx, `SELECT data FROM avtalegiro_file_chunks WHERE tenant_id = $1 AND file_id = $2 AND seq = $3`,
			r.tenant, r.id, r.seq).Scan(&r.cur)
		switch {
		case errors.Is(err, sql.ErrNoRows) && r.seq == 0:
			r.err = fmt.Errorf("avtalegiro: file %s: %w", r.id, store.ErrNotFound)
		case errors.Is(err, sql.ErrNoRows):
			r.err = io.EOF
		case err != nil:
			r.err = fmt.Errorf("avtalegiro: file %s chunk %d: %w", r.id, r.seq, err)
		}
		r.seq++
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// UnsubmittedFiles returns the account's claim files not yet
// accepted by the bank, oldest first.
func UnsubmittedFiles(ctx context.Context, st *store.Store, accountID string) ([]AvtaleGiroFile, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return nil, err
	}
	return store.QueryAll(ctx, st.Reader(), scanAvgFile, `SELECT `+avgFileColumns+` FROM avtalegiro_files WHERE tenant_id = $1 AND account_id = $2
		AND direction = 'Out' AND submitted_at IS NULL ORDER BY id`, tenant, accountID)
}

// MarkFileSubmitted records that the bank accepted file id.
func MarkFileSubmitted(ctx context.Context, st *store.Store, id string, at time.Time) error {
	return st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE avtalegiro_files SET submitted_at = $3 WHERE tenant_id = $1 AND id = $2 AND submitted_at IS NULL`,
			tx.TenantID(), id, store.TimeParam(at))
		return err
	})
}

// The newest stored claim file of an AvtaleGiro account: what
// `kadens avtalegiro fetch --latest` writes again when the export's own
// output was lost (the command was killed after the items were marked
// sent). Ids are UUIDv7, so the greatest id is the file stored last.

// LatestClaimFile returns the newest claim file written for the
// context's tenant's account, or store.ErrNotFound.
func LatestClaimFile(ctx context.Context, st *store.Store, accountID string) (AvtaleGiroFile, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroFile{}, err
	}
	if !store.ValidID(accountID) {
		return AvtaleGiroFile{}, store.ErrNotFound
	}
	f, err := scanAvgFile(st.Reader().QueryRow(ctx, `SELECT `+avgFileColumns+` FROM avtalegiro_files
		WHERE tenant_id = $1 AND account_id = $2 AND direction = 'Out' ORDER BY id DESC LIMIT 1`, tenant, accountID))
	if err != nil {
		return AvtaleGiroFile{}, fmt.Errorf("avtalegiro: latest avtalegiro claim file of account %s: %w", accountID, store.NotFound(err))
	}
	return f, nil
}
