struct Shop;

impl Shop {
    /// Count the products.
    #[mcpeye::tool]
    fn count(&self) -> u32 {
        0
    }
}

fn main() {}
