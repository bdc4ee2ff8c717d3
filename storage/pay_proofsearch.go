package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Proofs are searched by perceptual hash with multi-index hashing (Norouzi,
// Punjani and Fleet): the 64-bit hash is cut into three bands of 21, 21 and
// 22 bits, each indexed with (store_id, band). If two hashes differ in at
// most 8 bits, one band differs in at most 2 of them (three bands differing
// in 3 or more would make 9), so the candidates are the rows whose band
// equals one of the values within 2 bits of the query's band: 232 + 232 +
// 254 index probes. Bands this wide make a probe match about N/2²¹ rows, so
// a million proofs give a few hundred candidates rather than the ~8,000 of
// four 16-bit bands. Each band index carries the hash and the creation
// time, so the exact distance and the 90-day window are checked inside the
// index (an index-only scan) before any row is read.
var bandWidths = [...]int{21, 21, 22}

const bandRadius = 2

// bandsOf splits a hash into its bands, most significant first.
func bandsOf(hash uint64) [len(bandWidths)]int32 {
	var (
		out   [len(bandWidths)]int32
		shift = 64
	)
	for i, w := range bandWidths {
		shift -= w
		out[i] = int32(hash >> shift & (1<<w - 1))
	}
	return out
}

// bandNeighbours lists every value of a width-bit band within radius bits
// of band.
func bandNeighbours(band int32, width, radius int) []int32 {
	out := []int32{band}
	var walk func(value int32, from, left int)
	walk = func(value int32, from, left int) {
		if left == 0 {
			return
		}
		for bit := from; bit < width; bit++ {
			flipped := value ^ (1 << bit)
			out = append(out, flipped)
			walk(flipped, bit+1, left-1)
		}
	}
	walk(band, 0, radius)
	return out
}

// similarQuery finds the proofs of a store created since $3, within $4 bits
// of hash $2, through the four band indexes.
const similarQuery = `WITH candidates AS (
		SELECT id FROM payment_proofs WHERE store_id = $1 AND band0 = ANY ($5) AND perceptual_hash IS NOT NULL
			AND created_at >= $3 AND bit_count((perceptual_hash # $2)::bit(64)) <= $4
		UNION SELECT id FROM payment_proofs WHERE store_id = $1 AND band1 = ANY ($6) AND perceptual_hash IS NOT NULL
			AND created_at >= $3 AND bit_count((perceptual_hash # $2)::bit(64)) <= $4
		UNION SELECT id FROM payment_proofs WHERE store_id = $1 AND band2 = ANY ($7) AND perceptual_hash IS NOT NULL
			AND created_at >= $3 AND bit_count((perceptual_hash # $2)::bit(64)) <= $4)
	SELECT ` + proofColumns + `, bit_count((perceptual_hash # $2)::bit(64))::int AS distance
	FROM payment_proofs WHERE store_id = $1 AND id IN (SELECT id FROM candidates) AND id <> $8
	ORDER BY distance, created_at DESC, id DESC LIMIT $9`

// scanQuery is the same search without the band indexes: every hashed proof
// of the store in the window. The benchmark's baseline.
const scanQuery = `SELECT ` + proofColumns + `, bit_count((perceptual_hash # $2)::bit(64))::int AS distance
	FROM payment_proofs WHERE store_id = $1 AND perceptual_hash IS NOT NULL AND created_at >= $3
	  AND bit_count((perceptual_hash # $2)::bit(64)) <= $4 AND id <> $5
	ORDER BY distance, created_at DESC, id DESC LIMIT $6`

// NearProofs finds the store's proofs since a time within maxDistance (at
// most 8) of hash through the band indexes, nearest first.
func (r reader) NearProofs(ctx context.Context, storeID, exclude uuid.UUID, hash uint64, since time.Time, maxDistance, limit int) ([]PaymentProof, error) {
	if maxDistance > len(bandWidths)*(bandRadius+1)-1 {
		return nil, fmt.Errorf("search radius %d is beyond the band indexes' %d", maxDistance, SimilarDistance)
	}
	args := []any{storeID, int64(hash), since, maxDistance}
	for i, band := range bandsOf(hash) {
		args = append(args, bandNeighbours(band, bandWidths[i], bandRadius))
	}
	args = append(args, exclude, limit)
	return r.collectNear(ctx, similarQuery, args)
}

// ScanNearProofs answers the similar search by scanning the store's window,
// for comparison with the band indexes.
func (r reader) ScanNearProofs(ctx context.Context, storeID, exclude uuid.UUID, hash uint64, since time.Time, maxDistance, limit int) ([]PaymentProof, error) {
	return r.collectNear(ctx, scanQuery, []any{storeID, int64(hash), since, maxDistance, exclude, limit})
}

func (r reader) collectNear(ctx context.Context, query string, args []any) ([]PaymentProof, error) {
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("find similar proofs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (PaymentProof, error) {
		var p PaymentProof
		err := scanProofInto(row, &p, &p.Distance)
		return p, err
	})
}

// FindSimilarProofs lists the store's proofs within distance 8 of a proof's
// hash from the last 90 days, nearest first; empty when it has no hash.
func (db *DB) FindSimilarProofs(ctx context.Context, storeID, proofID uuid.UUID) ([]PaymentProof, error) {
	p, err := db.FindPaymentProof(ctx, storeID, proofID)
	if err != nil {
		return nil, err
	}
	if p.PerceptualHash == nil {
		return []PaymentProof{}, nil
	}
	return db.NearProofs(ctx, storeID, p.ID, *p.PerceptualHash, db.now().Add(-ProofWindow), SimilarDistance, maxSimilar)
}

// ProofToHash is what the payment-proof workflow needs to hash a proof.
type ProofToHash struct {
	StoreID        uuid.UUID
	ProofID        uuid.UUID
	ImageKey       string
	StoreSubdomain string // for the workflow's summary
}

// FindProofsAwaitingHash lists buyer proofs whose workflow has not started.
func (db *DB) FindProofsAwaitingHash(ctx context.Context, limit int) ([]ProofToHash, error) {
	rows, err := db.pool.Query(ctx, `SELECT p.store_id, p.id, p.image_key, COALESCE(s.subdomain, '')
		FROM payment_proofs p LEFT JOIN stores s ON s.id = p.store_id
		WHERE p.hash_started_at IS NULL AND p.kind = 'proof' ORDER BY p.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find proofs awaiting hash: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ProofToHash])
}

// MarkProofHashStarted records that a proof's workflow exists.
func (db *DB) MarkProofHashStarted(ctx context.Context, storeID, proofID uuid.UUID) error {
	_, err := db.pool.Exec(ctx, `UPDATE payment_proofs SET hash_started_at = $3 WHERE store_id = $1 AND id = $2 AND hash_started_at IS NULL`,
		storeID, proofID, db.now())
	if err != nil {
		return fmt.Errorf("mark proof hash started: %w", err)
	}
	return nil
}

// RecordProofHash saves a proof's perceptual hash and runs the duplicate
// gate: the nearest other proof of the store from the last 90 days within
// distance 5 marks it duplicate_suspected with duplicate_of.
func (db *DB) RecordProofHash(ctx context.Context, storeID, proofID uuid.UUID, hash uint64) (PaymentProof, error) {
	var out PaymentProof
	err := db.InTx(ctx, func(tx *Tx) error {
		near, err := tx.NearProofs(ctx, storeID, proofID, hash, tx.now().Add(-ProofWindow), DuplicateDistance, 1)
		if err != nil {
			return err
		}
		var duplicateOf *uuid.UUID
		if len(near) > 0 {
			duplicateOf = &near[0].ID
		}
		out, err = scanProof(tx.tx.QueryRow(ctx, `UPDATE payment_proofs SET perceptual_hash = $3, duplicate_suspected = $4, duplicate_of = $5,
				updated_at = $6
			WHERE store_id = $1 AND id = $2 RETURNING `+proofColumns, storeID, proofID, int64(hash), duplicateOf != nil, duplicateOf, tx.now()))
		if err != nil {
			return notFoundIfNoRows(err, "record proof hash")
		}
		return nil
	})
	return out, err
}
