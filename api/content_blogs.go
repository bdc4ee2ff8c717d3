package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// Blogs and their articles (decisions §22).

type blogResponse struct {
	ID        uuid.UUID `json:"id"`
	Handle    string    `json:"handle"`
	URL       string    `json:"url"`
	Title     titleText `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func blogView(lang string) func(storage.Blog) blogResponse {
	return func(b storage.Blog) blogResponse {
		return blogResponse{ID: b.ID, Handle: b.Handle, URL: "/blogs/" + handle.Path(b.Handle), Title: newTitleText(b.Title, lang),
			CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC()}
	}
}

// handleCreateBlog serves POST /stores/{store_id}/blogs.
func (s *Server) handleCreateBlog() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateBlog](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		b := storage.Blog{StoreID: storeID, Title: contentText(req.Title)}
		if req.Handle != nil {
			b.Handle = *req.Handle
		}
		return writeView(s, w, r, http.StatusCreated, blogView(lang), func(tx *storage.Tx) (storage.Blog, error) {
			return b, tx.CreateBlog(r.Context(), &b)
		})
	}
}

// handleListBlogs serves GET /stores/{store_id}/blogs.
func (s *Server) handleListBlogs() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		search := contentSearch(q)
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		blogs, total, err := s.db.FindBlogs(r.Context(), storeID, storage.BlogFilter{Page: storage.Page{Page: page, Limit: limit}, Search: search})
		if err != nil {
			return err
		}
		view := blogView(lang)
		respond(w, http.StatusOK, newList(views(blogs, view), page, limit, total))
		return nil
	}
}

// handleGetBlog serves GET /stores/{store_id}/blogs/{blog_id}.
func (s *Server) handleGetBlog() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "blog_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		b, err := s.db.FindBlog(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, blogView(lang)(b))
		return nil
	}
}

// handleUpdateBlog serves PATCH /stores/{store_id}/blogs/{blog_id}.
func (s *Server) handleUpdateBlog() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "blog_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateBlog](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		view := blogView(lang)
		return writeView(s, w, r, http.StatusOK, view, func(tx *storage.Tx) (storage.Blog, error) {
			return tx.UpdateBlog(r.Context(), storeID, id, func(b *storage.Blog) error {
				auditBefore(r.Context(), view(*b))
				if req.Handle.Set {
					b.Handle = req.Handle.Value
				}
				if req.Title.Set {
					b.Title = contentText(req.Title.Value)
				}
				return nil
			})
		})
	}
}

// handleDeleteBlog serves DELETE /stores/{store_id}/blogs/{blog_id}: the
// blog and its articles.
func (s *Server) handleDeleteBlog() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "blog_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			removed, err := tx.RemoveMenuItemsOfBlog(r.Context(), storeID, id)
			if err != nil {
				return nil, err
			}
			b, err := tx.DeleteBlog(r.Context(), storeID, id)
			if err != nil {
				return nil, err
			}
			auditBefore(r.Context(), blogView("en")(b))
			return deleteAnswer(r.Context(), removed), nil
		})
	}
}

type articleResponse struct {
	ID          uuid.UUID   `json:"id"`
	BlogID      uuid.UUID   `json:"blog_id"`
	Handle      string      `json:"handle"`
	Title       titleText   `json:"title"`
	Body        bodyText    `json:"body"`
	Excerpt     *titleText  `json:"excerpt"`
	ImageID     *uuid.UUID  `json:"image_id"`
	Author      string      `json:"author"`
	Tags        []string    `json:"tags"`
	PublishedAt *time.Time  `json:"published_at"`
	Status      string      `json:"status"`
	SEO         seoResponse `json:"seo"`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
}

func articleView(lang string, now time.Time) func(storage.Article) articleResponse {
	return func(a storage.Article) articleResponse {
		tags := a.Tags
		if tags == nil {
			tags = []string{}
		}
		return articleResponse{ID: a.ID, BlogID: a.BlogID, Handle: a.Handle, Title: newTitleText(a.Title, lang), Body: newBodyText(a.Body, lang),
			Excerpt: optionalTitleText(a.Excerpt, lang), ImageID: a.ImageID, Author: a.Author, Tags: tags, PublishedAt: utcOrNil(a.PublishedAt),
			Status: publicationStatus(a.PublishedAt, now), SEO: seoResponse(a.SEO), CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}
	}
}

// handleCreateArticle serves POST /stores/{store_id}/blogs/{blog_id}/articles.
func (s *Server) handleCreateArticle() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		blogID, err := pathUUID(r, "blog_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.CreateArticle](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		a := storage.Article{StoreID: storeID, BlogID: blogID, Title: contentText(req.Title), Tags: request.Tags(req.Tags)}
		if req.Handle != nil {
			a.Handle = *req.Handle
		}
		if req.Body != nil {
			a.Body = contentBody(*req.Body)
		}
		if req.Excerpt != nil {
			a.Excerpt = contentText(*req.Excerpt)
		}
		if req.ImageID != nil {
			id, _ := request.ParseUUID(*req.ImageID)
			a.ImageID = &id
		}
		if req.Author != nil {
			a.Author = strings.TrimSpace(*req.Author)
		}
		a.PublishedAt, _ = request.ParsePublishedAt(req.PublishedAt)
		if req.SEO != nil {
			a.SEO = contentSEO(*req.SEO)
		}
		return writeView(s, w, r, http.StatusCreated, articleView(lang, s.db.ContentClock()), func(tx *storage.Tx) (storage.Article, error) {
			return a, tx.CreateArticle(r.Context(), &a)
		})
	}
}

// handleListArticles serves GET /stores/{store_id}/blogs/{blog_id}/articles.
func (s *Server) handleListArticles() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		blogID, err := pathUUID(r, "blog_id")
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(20)
		status := q.enum("status", []string{"published", "scheduled", "draft"}, "")
		tag := q.str("tag")
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		if _, err := s.db.FindBlog(r.Context(), storeID, blogID); err != nil {
			return err
		}
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		f := storage.ArticleFilter{Page: storage.Page{Page: page, Limit: limit}, Status: status}
		if tag != nil {
			f.Tag = strings.TrimSpace(*tag)
		}
		articles, total, err := s.db.FindArticles(r.Context(), storeID, blogID, f)
		if err != nil {
			return err
		}
		view := articleView(lang, s.db.ContentClock())
		respond(w, http.StatusOK, newList(views(articles, view), page, limit, total))
		return nil
	}
}

// articlePath reads the blog and article ids of an article route.
func articlePath(r *http.Request) (blogID, id uuid.UUID, err error) {
	if blogID, err = pathUUID(r, "blog_id"); err != nil {
		return
	}
	id, err = pathUUID(r, "article_id")
	return
}

// handleGetArticle serves GET /stores/{store_id}/blogs/{blog_id}/articles/{article_id}.
func (s *Server) handleGetArticle() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		blogID, id, err := articlePath(r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		a, err := s.db.FindArticle(r.Context(), storeID, blogID, id)
		if err != nil {
			return err
		}
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, articleView(lang, s.db.ContentClock())(a))
		return nil
	}
}

// handleUpdateArticle serves PATCH /stores/{store_id}/blogs/{blog_id}/articles/{article_id}.
func (s *Server) handleUpdateArticle() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		blogID, id, err := articlePath(r)
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateArticle](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		view := articleView(lang, s.db.ContentClock())
		return writeView(s, w, r, http.StatusOK, view, func(tx *storage.Tx) (storage.Article, error) {
			return tx.UpdateArticle(r.Context(), storeID, blogID, id, func(a *storage.Article) error {
				auditBefore(r.Context(), view(*a))
				if req.Handle.Set {
					a.Handle = req.Handle.Value
				}
				if req.Title.Set {
					a.Title = contentText(req.Title.Value)
				}
				if req.Body.Set {
					a.Body = contentBody(req.Body.Value)
				}
				if req.Excerpt.Set {
					a.Excerpt = contentText(req.Excerpt.Value)
				}
				if req.ImageID.Set {
					a.ImageID = nil
					if !req.ImageID.Null {
						imageID, _ := request.ParseUUID(req.ImageID.Value)
						a.ImageID = &imageID
					}
				}
				if req.Author.Set {
					a.Author = strings.TrimSpace(req.Author.Value)
				}
				if req.Tags.Set {
					a.Tags = request.Tags(req.Tags.Value)
				}
				if req.PublishedAt.Set {
					a.PublishedAt, _ = request.ParsePublishedAt(optionalValue(req.PublishedAt))
				}
				if req.SEO.Set {
					a.SEO = contentSEO(req.SEO.Value)
				}
				return nil
			})
		})
	}
}

// handleDeleteArticle serves DELETE /stores/{store_id}/blogs/{blog_id}/articles/{article_id}.
func (s *Server) handleDeleteArticle() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		blogID, id, err := articlePath(r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			a, err := tx.DeleteArticle(r.Context(), storeID, blogID, id)
			if err != nil {
				return nil, err
			}
			auditBefore(r.Context(), articleView("en", s.db.ContentClock())(a))
			removed, err := tx.RemoveMenuItemsTargeting(r.Context(), storeID, storage.MenuItemArticle, id)
			return deleteAnswer(r.Context(), removed), err
		})
	}
}

// storefrontArticleResponse is what buyers read of an article.
type storefrontArticleResponse struct {
	Handle      string      `json:"handle"`
	URL         string      `json:"url"`
	Title       titleText   `json:"title"`
	Body        bodyText    `json:"body"`
	Excerpt     *titleText  `json:"excerpt"`
	Author      string      `json:"author"`
	Tags        []string    `json:"tags"`
	PublishedAt time.Time   `json:"published_at"`
	SEO         seoResponse `json:"seo"`
}

func storefrontArticle(blog storage.Blog, a storage.Article, lang string) storefrontArticleResponse {
	tags := a.Tags
	if tags == nil {
		tags = []string{}
	}
	return storefrontArticleResponse{Handle: a.Handle, URL: "/blogs/" + handle.Path(blog.Handle) + "/articles/" + handle.Path(a.Handle),
		Title: newTitleText(a.Title, lang), Body: newBodyText(a.Body, lang), Excerpt: optionalTitleText(a.Excerpt, lang), Author: a.Author,
		Tags: tags, PublishedAt: a.PublishedAt.UTC(), SEO: seoResponse(a.SEO)}
}

// storefrontBlog reads the store, its blog at the path's handle and the
// reader's language.
func (s *Server) storefrontBlog(r *http.Request) (storage.Store, storage.Blog, string, error) {
	store, err := s.storefrontStore(r)
	if err != nil {
		return storage.Store{}, storage.Blog{}, "", err
	}
	h, err := pathHandle(r, "handle")
	if err != nil {
		return storage.Store{}, storage.Blog{}, "", err
	}
	blog, err := s.db.FindBlogByHandle(r.Context(), store.ID, h)
	if err != nil {
		return storage.Store{}, storage.Blog{}, "", err
	}
	lang := acceptedLanguage(r.Header.Get("Accept-Language"))
	if lang == "" {
		lang = store.DefaultLanguage
	}
	return store, blog, lang, nil
}

// handleStorefrontArticles serves GET /storefront/{subdomain}/blogs/{handle}/articles:
// the blog's published articles, latest first.
func (s *Server) handleStorefrontArticles() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		tag := q.str("tag")
		if err := q.err(); err != nil {
			return err
		}
		store, blog, lang, err := s.storefrontBlog(r)
		if err != nil {
			return err
		}
		f := storage.ArticleFilter{Page: storage.Page{Page: page, Limit: limit}, Status: "published"}
		if tag != nil {
			f.Tag = strings.TrimSpace(*tag)
		}
		articles, total, err := s.db.FindArticles(r.Context(), store.ID, blog.ID, f)
		if err != nil {
			return err
		}
		items := make([]storefrontArticleResponse, 0, len(articles))
		for _, a := range articles {
			items = append(items, storefrontArticle(blog, a, lang))
		}
		respond(w, http.StatusOK, map[string]any{"blog": map[string]any{"handle": blog.Handle, "title": newTitleText(blog.Title, lang)},
			"items": items, "pagination": newList(items, page, limit, total).Pagination})
		return nil
	}
}

// handleStorefrontArticle serves GET /storefront/{subdomain}/blogs/{handle}/articles/{article_handle}:
// published articles only.
func (s *Server) handleStorefrontArticle() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, blog, lang, err := s.storefrontBlog(r)
		if err != nil {
			return err
		}
		h, err := pathHandle(r, "article_handle")
		if err != nil {
			return err
		}
		a, err := s.db.FindPublishedArticle(r.Context(), store.ID, blog.ID, h)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, storefrontArticle(blog, a, lang))
		return nil
	}
}
