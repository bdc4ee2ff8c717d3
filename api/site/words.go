package site

// words are the storefront's own labels in both languages; what the
// merchant writes (names, settings, pages) comes from the store.
var words = map[string][2]string{ // key: {ar, en}
	"home":           {"الرئيسية", "Home"},
	"all_products":   {"كل المنتجات", "All products"},
	"search":         {"بحث", "Search"},
	"search_label":   {"ابحث في المتجر", "Search the store"},
	"search_for":     {"نتائج البحث عن", "Results for"},
	"no_results":     {"لا توجد منتجات مطابقة.", "No products match."},
	"cart":           {"السلة", "Cart"},
	"add_to_cart":    {"أضف إلى السلة", "Add to cart"},
	"sold_out":       {"نفدت الكمية", "Sold out"},
	"from":           {"من", "From"},
	"price":          {"السعر", "Price"},
	"quantity":       {"الكمية", "Quantity"},
	"option":         {"الاختيار", "Option"},
	"view_all":       {"عرض الكل", "View all"},
	"cod":            {"الدفع عند الاستلام متاح", "Cash on delivery available"},
	"sort":           {"الترتيب", "Sort by"},
	"sort_manual":    {"المميزة", "Featured"},
	"sort_best":      {"الأكثر مبيعًا", "Best selling"},
	"sort_price_asc": {"السعر: من الأقل", "Price: low to high"},
	"sort_price_dsc": {"السعر: من الأعلى", "Price: high to low"},
	"sort_newest":    {"الأحدث", "Newest"},
	"sort_title":     {"الاسم", "Name"},
	"price_min":      {"أقل سعر", "Min price"},
	"price_max":      {"أعلى سعر", "Max price"},
	"in_stock":       {"المتوفر فقط", "In stock only"},
	"apply":          {"تطبيق", "Apply"},
	"previous":       {"السابق", "Previous"},
	"next":           {"التالي", "Next"},
	"page_n":         {"صفحة", "Page"},
	"products_n":     {"منتج", "products"},
	"not_found":      {"الصفحة غير موجودة", "Page not found"},
	"not_found_text": {"لم نجد ما تبحث عنه. جرّب البحث أو تصفح المنتجات.", "We could not find that page. Try a search or browse the products."},
	"back_home":      {"العودة إلى الرئيسية", "Back to the home page"},
	"read_more":      {"اقرأ المزيد", "Read more"},
	"articles":       {"المقالات", "Articles"},
	"no_articles":    {"لا توجد مقالات بعد.", "No articles yet."},
	"by":             {"بقلم", "By"},
	"language":       {"English", "العربية"},
	"menu":           {"القائمة", "Menu"},
	"watch_video":    {"شاهد الفيديو", "Watch the video"},
	"collections":    {"المجموعات", "Collections"},
	"skip":           {"تخطَّ إلى المحتوى", "Skip to content"},
	"empty_section":  {"اختر محتوى لهذا القسم من المحرر.", "Pick what this section shows in the editor."},
	"powered":        {"جميع الحقوق محفوظة", "All rights reserved"},
}

// word is a label in lang, or the key itself when there is none.
func word(lang, key string) string {
	w, ok := words[key]
	if !ok {
		return key
	}
	if lang == "en" {
		return w[1]
	}
	return w[0]
}
