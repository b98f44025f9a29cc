fn main() {
    for e in lockbench::locks::registry() {
        println!("{}", e.info.name);
    }
}
