package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ImageStatus is where an uploaded image is in its pipeline.
type ImageStatus string

// Image statuses.
const (
	ImageProcessing ImageStatus = "processing"
	ImageReady      ImageStatus = "ready"
	ImageFailed     ImageStatus = "failed"
)

// ProductImage is one uploaded image and where its objects live.
type ProductImage struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	ProductID   uuid.UUID
	Status      ImageStatus
	OriginalKey string
	ContentType string
	Width       *int
	Height      *int
	Position    int
	Error       *string
	CreatedAt   time.Time
}

// ProductPrefix is the object-store prefix of everything a product owns.
func ProductPrefix(storeID, productID uuid.UUID) string {
	return fmt.Sprintf("stores/%s/products/%s/", storeID, productID)
}

// ImageKey is the object key of one file of an image ("original", "large.webp", …).
func ImageKey(storeID, productID, imageID uuid.UUID, name string) string {
	return fmt.Sprintf("%simages/%s/%s", ProductPrefix(storeID, productID), imageID, name)
}

// ImageEntry is one element of a product's images list (decisions §3).
type ImageEntry struct {
	ID           uuid.UUID `json:"id"`
	URL          string    `json:"url"`
	ThumbnailURL string    `json:"thumbnail_url"`
	MediumURL    string    `json:"medium_url"`
	LargeURL     string    `json:"large_url"`
	Width        int       `json:"width"`
	Height       int       `json:"height"`
	Position     int       `json:"position"`
}

// CreateProductImage records an upload about to be processed, last in order.
func (tx *Tx) CreateProductImage(ctx context.Context, img *ProductImage) error {
	if _, err := tx.lockProduct(ctx, img.StoreID, img.ProductID); err != nil {
		return err
	}
	if img.ID == uuid.Nil { // the caller may name it to store the original first
		img.ID = NewID()
	}
	img.Status = ImageProcessing
	img.OriginalKey = ImageKey(img.StoreID, img.ProductID, img.ID, "original")
	img.CreatedAt = tx.now()
	err := tx.tx.QueryRow(ctx, `INSERT INTO product_images (id, store_id, product_id, status, original_key, content_type, position, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, (SELECT COALESCE(max(position), 0) + 1 FROM product_images WHERE store_id = $2 AND product_id = $3), $7, $7)
		RETURNING position`, img.ID, img.StoreID, img.ProductID, img.Status, img.OriginalKey, img.ContentType, img.CreatedAt).Scan(&img.Position)
	if err != nil {
		return fmt.Errorf("create product image: %w", err)
	}
	return nil
}

// FindProductImage returns one image of the store.
func (r reader) FindProductImage(ctx context.Context, storeID, imageID uuid.UUID) (ProductImage, error) {
	var img ProductImage
	err := r.q.QueryRow(ctx, `SELECT id, store_id, product_id, status, original_key, content_type, width, height, position, error, created_at
		FROM product_images WHERE store_id = $1 AND id = $2`, storeID, imageID).
		Scan(&img.ID, &img.StoreID, &img.ProductID, &img.Status, &img.OriginalKey, &img.ContentType, &img.Width, &img.Height,
			&img.Position, &img.Error, &img.CreatedAt)
	if err != nil {
		return ProductImage{}, notFoundIfNoRows(err, "find image "+imageID.String())
	}
	return img, nil
}

// AttachProductImage marks a processed image ready and adds it to the
// product's images list, writing product.updated. It returns the entry as
// stored (with its position); attaching twice (a retried activity) is a no-op.
func (db *DB) AttachProductImage(ctx context.Context, storeID, imageID uuid.UUID, entry ImageEntry) (ImageEntry, error) {
	err := db.InTx(ctx, func(tx *Tx) error {
		var (
			productID uuid.UUID
			status    ImageStatus
		)
		err := tx.tx.QueryRow(ctx, `SELECT product_id, status, position FROM product_images WHERE store_id = $1 AND id = $2 FOR UPDATE`,
			storeID, imageID).Scan(&productID, &status, &entry.Position)
		if err != nil {
			return notFoundIfNoRows(err, "attach image") // deleted meanwhile
		}
		if status == ImageReady {
			return nil
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE product_images SET status = 'ready', width = $3, height = $4, updated_at = $5
			WHERE store_id = $1 AND id = $2`, storeID, imageID, entry.Width, entry.Height, tx.now()); err != nil {
			return fmt.Errorf("attach image: %w", err)
		}
		raw, err := json.Marshal(entry)
		if err != nil {
			return err
		}
		p, err := scanProduct(tx.tx.QueryRow(ctx, `UPDATE products SET images = images || jsonb_build_array($3::jsonb), updated_at = $4
			WHERE store_id = $1 AND id = $2 RETURNING `+productColumns, storeID, productID, raw, tx.now()))
		if err != nil {
			return notFoundIfNoRows(err, "attach image")
		}
		return tx.emitProduct(ctx, EventProductUpdated, p)
	})
	return entry, err
}

// FailProductImage records why an image could not be processed.
func (db *DB) FailProductImage(ctx context.Context, storeID, imageID uuid.UUID, reason string) error {
	_, err := db.pool.Exec(ctx, `UPDATE product_images SET status = 'failed', error = $3, updated_at = $4
		WHERE store_id = $1 AND id = $2 AND status = 'processing'`, storeID, imageID, reason, db.now())
	if err != nil {
		return fmt.Errorf("fail product image: %w", err)
	}
	return nil
}

// DeleteProductImage removes the image whose url (any of its sizes) is given
// from the product's list, its alt text from media_urls, and its row; it
// returns the image so the caller can delete its objects after commit.
func (tx *Tx) DeleteProductImage(ctx context.Context, storeID, productID uuid.UUID, url string) (ProductImage, error) {
	p, err := tx.lockProduct(ctx, storeID, productID)
	if err != nil {
		return ProductImage{}, err
	}
	var entries []ImageEntry
	if err := json.Unmarshal(p.Images, &entries); err != nil {
		return ProductImage{}, fmt.Errorf("read product images: %w", err)
	}
	var (
		found ImageEntry
		keep  []ImageEntry
	)
	for _, e := range entries {
		if e.URL == url || e.ThumbnailURL == url || e.MediumURL == url || e.LargeURL == url {
			found = e
			continue
		}
		keep = append(keep, e)
	}
	if found.ID == uuid.Nil {
		return ProductImage{}, fmt.Errorf("image %s: %w", url, ErrNotFound)
	}
	img, err := tx.FindProductImage(ctx, storeID, found.ID)
	if err != nil {
		return ProductImage{}, err
	}
	if keep == nil {
		keep = []ImageEntry{}
	}
	raw, _ := json.Marshal(keep)
	p, err = scanProduct(tx.tx.QueryRow(ctx, `UPDATE products SET images = $3,
			media_urls = media_urls - $4::text - $5::text - $6::text - $7::text, updated_at = $8
		WHERE store_id = $1 AND id = $2 RETURNING `+productColumns,
		storeID, productID, raw, found.URL, found.ThumbnailURL, found.MediumURL, found.LargeURL, tx.now()))
	if err != nil {
		return ProductImage{}, fmt.Errorf("remove image from product: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM product_images WHERE store_id = $1 AND id = $2`, storeID, found.ID); err != nil {
		return ProductImage{}, fmt.Errorf("delete image: %w", err)
	}
	return img, tx.emitProduct(ctx, EventProductUpdated, p)
}

// SetImageAlt writes the alt text of one of the product's images into the
// media_urls sidecar, keyed by the image's url.
func (tx *Tx) SetImageAlt(ctx context.Context, storeID, productID uuid.UUID, url, alt string) error {
	p, err := tx.lockProduct(ctx, storeID, productID)
	if err != nil {
		return err
	}
	var entries []ImageEntry
	if err := json.Unmarshal(p.Images, &entries); err != nil {
		return fmt.Errorf("read product images: %w", err)
	}
	known := false
	for _, e := range entries {
		known = known || e.URL == url
	}
	if !known {
		return &InvalidError{Field: "url", Code: "not_found", Message: "is not the url of one of this product's images"}
	}
	altJSON, _ := json.Marshal(map[string]string{"alt": alt})
	p, err = scanProduct(tx.tx.QueryRow(ctx, `UPDATE products SET media_urls = jsonb_set(media_urls, ARRAY[$3::text], $4::jsonb), updated_at = $5
		WHERE store_id = $1 AND id = $2 RETURNING `+productColumns, storeID, productID, url, altJSON, tx.now()))
	if err != nil {
		return fmt.Errorf("set image alt: %w", err)
	}
	return tx.emitProduct(ctx, EventProductUpdated, p)
}

// ProcessingImage is an image whose pipeline has not finished.
type ProcessingImage struct {
	ID          uuid.UUID
	ProductID   uuid.UUID
	ProductName string
	CreatedAt   time.Time
}

// FindProcessingImages lists the store's images still processing, oldest first.
func (r reader) FindProcessingImages(ctx context.Context, storeID uuid.UUID, limit int) ([]ProcessingImage, error) {
	rows, err := r.q.Query(ctx, `SELECT i.id, i.product_id, p.name, i.created_at FROM product_images i
		JOIN products p ON p.store_id = i.store_id AND p.id = i.product_id
		WHERE i.store_id = $1 AND i.status = 'processing' ORDER BY i.created_at, i.id LIMIT $2`, storeID, limit)
	if err != nil {
		return nil, fmt.Errorf("find processing images: %w", err)
	}
	images, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ProcessingImage])
	if err != nil {
		return nil, fmt.Errorf("find processing images: %w", err)
	}
	return images, nil
}
